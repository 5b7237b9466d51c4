import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/server-harness";
import { cleanEnv, loadedModules, loadedPackages, recordingEnv, run, SERVER_PACKAGES } from "./package-harness";

/**
 * Issue 21 item 4: the built CLI loads the server only for the commands that run it. The bundle
 * is built (as `npm run build` does, with chunks) into a directory of its own under dist/, and a
 * module-load hook records every module `yard health` resolves against a running server.
 */
const root = resolve(import.meta.dirname, "..", "..");

describe("client commands of the built CLI", () => {
  let out: string;
  let logs: string;
  let server: TestServer;

  beforeAll(async () => {
    mkdirSync(join(root, "dist"), { recursive: true }); // a fresh clone has no dist/ yet
    out = mkdtempSync(join(root, "dist", ".client-load-"));
    logs = mkdtempSync(join(tmpdir(), "yard-modules-"));
    const built = await run(process.execPath, [join(root, "scripts", "build.mjs"), "cli", "--outdir", out]);
    expect(built.code, built.stderr).toBe(0);
    server = await startTestServer();
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(out, { recursive: true, force: true });
    rmSync(logs, { recursive: true, force: true });
  });

  it("`yard health` loads no fastify, better-sqlite3, drizzle-orm, ai or MCP SDK", async () => {
    const log = join(logs, "health.log");
    const r = await run(process.execPath, [join(out, "yard.mjs"), "health", "--url", server.url], { env: recordingEnv(log, cleanEnv()) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok: /);
    const modules = loadedModules(log);
    // the hook saw the CLI's packages (the tRPC client is bundled into the CLI: scripts/build.mjs)
    expect(loadedPackages(modules, ["commander"])).toEqual(["commander"]);
    expect(loadedPackages(modules, SERVER_PACKAGES)).toEqual([]);
  });

  it("the hook does see a server package when one is loaded (the check can fail)", async () => {
    const log = join(logs, "control.log");
    const r = await run(process.execPath, ["--input-type=module", "-e", 'await import("fastify")'], { cwd: root, env: recordingEnv(log, cleanEnv()) });
    expect(r.code, r.stderr).toBe(0);
    expect(loadedPackages(loadedModules(log), SERVER_PACKAGES)).toEqual(["fastify"]);
  });
});
