import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../paths";
import { SWITCHYARD_TOOLS } from "./tools";

/** docs/MCP.md stays true: every tool has its section, naming each of its arguments and result fields. */
describe("docs/MCP.md", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs", "MCP.md"), "utf8");
  for (const tool of SWITCHYARD_TOOLS) {
    it(`documents ${tool.name}`, () => {
      const start = doc.indexOf(`**\`${tool.name}\`**`);
      expect(start, `no section for ${tool.name}`).toBeGreaterThan(0);
      const next = doc.indexOf("\n**`", start + 1);
      const section = doc.slice(start, next === -1 ? undefined : next);
      for (const field of Object.keys(tool.input.shape)) expect(section, `${tool.name} input ${field}`).toContain(`\`${field}`);
      const shared = { RunAnswer: ["status", "needsHuman", "run", "waitedMs"] } as Record<string, string[]>;
      const outputs = Object.keys(tool.output.shape).filter((f) => !Object.entries(shared).some(([name, fields]) => section.includes(name) && fields.includes(f)));
      for (const field of outputs) expect(section, `${tool.name} output ${field}`).toContain(`\`${field}`);
    });
  }
});
