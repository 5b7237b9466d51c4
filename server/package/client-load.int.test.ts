import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/server-harness";
import { bundledSources, cleanEnv, loadedModules, loadedPackages, recordingEnv, run, SERVER_PACKAGES } from "./package-harness";

/**
 * Issue 21 item 4: the built CLI loads the server only for the commands that run it. The bundle
 * is built (as `npm run build` does, with chunks) into a directory of its own under dist/, and a
 * module-load hook records every module `yard health` resolves against a running server; the
 * build's metafile names the sources in each bundle file it loaded.
 */
const root = resolve(import.meta.dirname, "..", "..");

describe("client commands of the built CLI", () => {
  let out: string;
  let logs: string;
  let metafile: string;
  let server: TestServer;

  beforeAll(async () => {
    mkdirSync(join(root, "dist"), { recursive: true }); // a fresh clone has no dist/ yet
    out = mkdtempSync(join(root, "dist", ".client-load-"));
    logs = mkdtempSync(join(tmpdir(), "yard-modules-"));
    metafile = join(logs, "meta.json");
    const built = await run(process.execPath, [join(root, "scripts", "build.mjs"), "cli", "--outdir", out, "--metafile", metafile]);
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
    // the hook saw the CLI (commander and the tRPC client are bundled into it: scripts/build.mjs)
    expect(modules).toContain(pathToFileURL(join(out, "yard.mjs")).href);
    expect(loadedPackages(modules, [...SERVER_PACKAGES, "commander", "zod"])).toEqual([]);
  });

  it("`yard health` runs no server module, and not the tRPC client: GET /health over node:http", async () => {
    const log = join(logs, "health-sources.log");
    const r = await run(process.execPath, [join(out, "yard.mjs"), "health", "--url", server.url], { env: recordingEnv(log, cleanEnv()) });
    expect(r.code, r.stderr).toBe(0);
    const sources = bundledSources(metafile, root, loadedModules(log));
    expect(sources).toContain("server/cli/commands/health.ts");
    expect(sources.filter((s) => s.startsWith("server/") && !s.startsWith("server/cli/") && s !== "server/client/default-url.ts")).toEqual([]);
    expect(sources.filter((s) => s.startsWith("node_modules/") && !s.startsWith("node_modules/commander/"))).toEqual([]);
  });

  it("the metafile does name the server modules a command runs (the check can fail): yard doctor reads the config", async () => {
    const log = join(logs, "doctor.log");
    await run(process.execPath, [join(out, "yard.mjs"), "doctor", "--json", "--url", server.url], { env: recordingEnv(log, cleanEnv({ SWITCHYARD_HOME: logs })) });
    expect(bundledSources(metafile, root, loadedModules(log))).toContain("server/config.ts");
  });

  it("the hook does see a server package when one is loaded (the check can fail)", async () => {
    const log = join(logs, "control.log");
    const r = await run(process.execPath, ["--input-type=module", "-e", 'await import("fastify")'], { cwd: root, env: recordingEnv(log, cleanEnv()) });
    expect(r.code, r.stderr).toBe(0);
    expect(loadedPackages(loadedModules(log), SERVER_PACKAGES)).toEqual(["fastify"]);
  });
});
