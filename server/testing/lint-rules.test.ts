import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../paths";

/**
 * The layer arrows and the no-cycle rule of eslint.config.js (docs/ARCHITECTURE.md "Folders"),
 * proved to fire: each snippet is linted at a virtual path inside the layer it breaks, with the
 * project's own config; the cycle is two real files under lint-fixtures/ (ignored by `npm run lint`).
 */

const LAYER_RULES = ["import-x/no-cycle", "import-x/no-restricted-paths", "no-restricted-imports"];
const FIXTURES = join(REPO_ROOT, "server/testing/lint-fixtures");

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: REPO_ROOT, ignore: false }); // lint-fixtures/ is ignored by `npm run lint`, not here
});

/** The layer rules an ESLint run reports for `code` placed at `path` (relative to the repo). */
async function layerRulesFor(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, path) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message).filter((id) => LAYER_RULES.includes(id));
}

describe("layer arrows", () => {
  it("shared/ depends on zod alone", async () => {
    expect(await layerRulesFor("shared/lint-fixture.ts", `import picomatch from "picomatch";\nexport const m = picomatch;\n`)).toEqual(["no-restricted-imports"]);
    expect(await layerRulesFor("shared/lint-fixture.ts", `import { z } from "zod";\nexport const S = z.string();\n`)).toEqual([]);
  });

  it("shared/ never imports server/ or web/, not even a type", async () => {
    expect(await layerRulesFor("shared/lint-fixture.ts", `import { DomainError } from "../server/errors";\nexport const E = DomainError;\n`))
      .toContain("import-x/no-restricted-paths");
    expect(await layerRulesFor("shared/events/lint-fixture.ts", `import type { Config } from "../../server/config";\nexport type C = Config;\n`))
      .toContain("import-x/no-restricted-paths");
    expect(await layerRulesFor("shared/lint-fixture.ts", `import { formatTime } from "../web/src/lib/format";\nexport const f = formatTime;\n`))
      .toContain("import-x/no-restricted-paths");
  });

  it("server/ imports shared/, never web/", async () => {
    expect(await layerRulesFor("server/runs/lint-fixture.ts", `import { formatTime } from "../../web/src/lib/format";\nexport const f = formatTime;\n`))
      .toContain("import-x/no-restricted-paths");
    expect(await layerRulesFor("server/runs/lint-fixture.ts", `import type { Run } from "../../shared/runs";\nexport type R = Run;\n`)).toEqual([]);
  });

  it("server/lib/ imports no domain; production code never imports server/testing/", async () => {
    expect(await layerRulesFor("server/lib/lint-fixture.ts", `import type { RunsService } from "../runs/runs.service";\nexport type R = RunsService;\n`))
      .toEqual(["import-x/no-restricted-paths"]);
    expect(await layerRulesFor("server/runs/lint-fixture.ts", `import { uuidv7 } from "../lib/uuidv7";\nexport const id = uuidv7;\n`)).toEqual([]);
    const harness = `import { tempHome } from "../testing/server-harness";\nexport const h = tempHome;\n`;
    expect(await layerRulesFor("server/runs/lint-fixture.ts", harness)).toEqual(["import-x/no-restricted-paths"]);
    expect(await layerRulesFor("server/app-fixture.ts", harness.replace("../testing", "./testing"))).toEqual(["import-x/no-restricted-paths"]);
    expect(await layerRulesFor("server/runs/lint-fixture.test.ts", harness)).toEqual([]);
    expect(await layerRulesFor("server/runs/lint-fixture.int.test.ts", harness)).toEqual([]);
  });

  it("web/ imports from server/ only `import type` of the AppRouter or the client", async () => {
    const at = "web/src/runs/lint-fixture.ts";
    expect(await layerRulesFor(at, `import type { AppRouter } from "../../../server/trpc/router";\nexport type R = AppRouter;\n`)).toEqual([]);
    expect(await layerRulesFor(at, `import { appRouter } from "../../../server/trpc/router";\nexport const r = appRouter;\n`)).toEqual(["no-restricted-imports"]);
    expect(await layerRulesFor(at, `import type { Config } from "../../../server/config";\nexport type C = Config;\n`)).toEqual(["no-restricted-imports"]);
    expect(await layerRulesFor(at, `import { ConfigError } from "../../../server/config";\nexport const E = ConfigError;\n`)).toEqual(["no-restricted-imports"]);
  });
});

describe("import-x/no-cycle", () => {
  /** The rules reported for a fixture file (read from disk, linted at its own path). */
  const fixtureRules = (name: string) => layerRulesFor(`server/testing/lint-fixtures/${name}`, readFileSync(join(FIXTURES, name), "utf8"));

  it("reports a value import cycle between two files", async () => {
    expect(await fixtureRules("cycle-a.ts")).toEqual(["import-x/no-cycle"]);
    expect(await fixtureRules("cycle-b.ts")).toEqual(["import-x/no-cycle"]);
  });

  it("lets a cycle of `import type` alone pass (erased at build)", async () => {
    expect(await fixtureRules("type-only-a.ts")).toEqual([]);
  });
});

describe("no exceptions", () => {
  it("no source file turns a layer rule off inline", () => {
    // eslint-disable comments and /* eslint rule: off */ configuration comments alike
    const pattern = "eslint(-disable[^*]*|[ ]+[^*]*)(no-cycle|no-restricted-paths|no-restricted-imports)";
    const grep = spawnSync("git", ["grep", "-n", "-E", pattern, "--", "*.ts", "*.tsx", "*.js", "*.mjs", ":!server/testing/lint-rules.test.ts"], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(grep.status, grep.stderr).toBe(1); // git grep: 1 = no match
    expect(grep.stdout).toBe("");
  });
});
