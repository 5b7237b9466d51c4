import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCacheRegistry, type CacheRegistry } from "./cache-registry";
import { cleanEnv, freePort, loadedModules, loadedPackages, recordingEnv, run, SERVER_PACKAGES, startYard, type Started } from "./package-harness";

/**
 * Issue 21 items 3-5, as a user meets them: `npm pack` (its prepack builds dist/), then
 * `npm install -g <tarball>` into a temp prefix with no network (the registry is the npm cache
 * `npm ci` filled, see cache-registry.ts; better-sqlite3 compiles from source: minutes), then the
 * installed `yard` starts the server, runs the demo, a script in another directory imports the
 * typed client (type-checked with skipLibCheck off), and `npx <tarball> start` starts one too.
 */
const root = resolve(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string };

function filesUnder(dir: string, skip: (rel: string) => boolean, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    const rel = relative(base, p);
    if (skip(rel)) return [];
    return e.isDirectory() ? filesUnder(p, skip, base) : [rel];
  });
}

describe("the packed package, installed with npm install -g", () => {
  let tmp: string;
  let prefix: string;
  let yard: string;
  let installed: string;
  let tarball: string;
  let registry: CacheRegistry | undefined;
  let server: Started | undefined;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), "yard-install-"));
    prefix = join(tmp, "prefix");
    // packed from a copy of the checkout's files: prepack rebuilds dist/, which the other tests
    // running meanwhile start servers from
    const src = join(tmp, "src");
    for (const f of execFileSync("git", ["ls-files", "-z"], { cwd: root }).toString().split("\0").filter(Boolean)) {
      if (!existsSync(join(root, f))) continue;
      mkdirSync(dirname(join(src, f)), { recursive: true });
      copyFileSync(join(root, f), join(src, f));
    }
    symlinkSync(join(root, "node_modules"), join(src, "node_modules"));
    const packed = await run("npm", ["pack", "--silent", "--pack-destination", tmp], { cwd: src, env: cleanEnv(), timeoutMs: 180_000 });
    expect(packed.code, packed.stderr).toBe(0);
    tarball = join(tmp, packed.stdout.trim().split("\n").pop() ?? "");
    expect(existsSync(tarball), packed.stdout).toBe(true);
    registry = await startCacheRegistry({ lockPath: join(root, "package-lock.json") });
    const started = Date.now();
    const npmArgs = ["install", "-g", "--prefix", prefix, "--cache", join(tmp, "npm-cache"), "--registry", `${registry.url}/`, "--no-audit", "--no-fund", tarball];
    const inst = await run("npm", npmArgs, { cwd: tmp, env: cleanEnv(), timeoutMs: 420_000 });
    expect(inst.code, `${inst.stdout}\n${inst.stderr}`).toBe(0);
    process.stderr.write(`[install] tarball ${(readFileSync(tarball).length / 1024).toFixed(0)} KiB, npm install -g in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    yard = join(prefix, "bin", "yard");
    installed = join(prefix, "lib", "node_modules", ...pkg.name.split("/"));
    env = cleanEnv({ SWITCHYARD_HOME: join(tmp, "home"), SWITCHYARD_LOG_LEVEL: "warn", PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}` });
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    await registry?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("holds dist/, the migrations and the runtime files, and no TypeScript sources", () => {
    const files = filesUnder(installed, (rel) => rel === "node_modules");
    for (const f of ["bin/yard.mjs", "dist/yard.mjs", "dist/web/index.html", "dist/client/index.js", "dist/types/client.d.ts", "CHANGELOG.md", "server/strategies/examples/demo.yaml", "server/testing/fake-agent/fake-agent.mjs"]) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => /^drizzle\/.*\.sql$/.test(f))).toBe(true);
    expect(files.some((f) => /^drizzle-pg\/.*\.sql$/.test(f))).toBe(true);
    expect(files.some((f) => /^server\/agents\/prompts\/.*\.md$/.test(f))).toBe(true);
    expect(files.filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);
    expect(existsSync(join(installed, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(true);
  });

  it("`yard --version` prints the package's version", async () => {
    const r = await run(yard, ["--version"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("`yard start` serves the built dashboard from dist/, never through tsx", async () => {
    const log = join(tmp, "start-modules.log");
    const port = await freePort();
    server = await startYard(yard, ["start", "--port", String(port)], recordingEnv(log, env));
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root">/);
    const modules = loadedModules(log);
    expect(loadedPackages(modules, ["fastify", "better-sqlite3"])).toEqual(["fastify", "better-sqlite3"]);
    expect(loadedPackages(modules, ["tsx"])).toEqual([]);
    const own = modules.filter((u) => u.startsWith(`file://${installed}/`) && !u.includes("/node_modules/")).map((u) => u.slice(`file://${installed}/`.length));
    expect(own.filter((f) => !f.startsWith("dist/") && f !== "bin/yard.mjs")).toEqual([]);
  });

  it("`yard run demo --input hi` completes against it", async () => {
    expect(server, "the server test ran first").toBeDefined();
    const r = await run(yard, ["run", "demo", "--input", "hi", "--url", server?.url ?? ""], { env, timeoutMs: 90_000 });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/completed/);
  });

  it("`yard health` (a client command) loads none of the server packages", async () => {
    const log = join(tmp, "health-modules.log");
    const r = await run(yard, ["health", "--url", server?.url ?? ""], { env: recordingEnv(log, env) });
    expect(r.code, r.stderr).toBe(0);
    const modules = loadedModules(log);
    // the hook saw the installed CLI (commander and the tRPC client are bundled into it: scripts/build.mjs)
    expect(modules.some((url) => url.endsWith("/node_modules/@switchyard-dev/yard/dist/yard.mjs"))).toBe(true);
    expect(loadedPackages(modules, SERVER_PACKAGES)).toEqual([]);
  });

  // skipLibCheck off: the package's declarations are checked too, so a type that is `any` (a
  // module they name that has no types here) or broken fails; the script's own node_modules holds
  // only the package (its dependencies) and the script's @types/node
  it("a script in another directory imports `<package>/client`, type-checked, and calls the server", async () => {
    const dir = join(tmp, "script");
    mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
    const [scope, name] = pkg.name.split("/") as [string, string];
    mkdirSync(join(dir, "node_modules", scope), { recursive: true });
    symlinkSync(installed, join(dir, "node_modules", scope, name));
    symlinkSync(join(root, "node_modules", "@types", "node"), join(dir, "node_modules", "@types", "node"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "script", private: true, type: "module" }));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: false, types: ["node"], outDir: "out" },
        include: ["script.ts"],
      }),
    );
    writeFileSync(
      join(dir, "script.ts"),
      `import { createSwitchyardClient } from "${pkg.name}/client";

const client = createSwitchyardClient({ url: process.env.SWITCHYARD_URL });
const health = await client.health.query();
const status: "ok" = health.status;
const strategies = await client.strategies.list.query({});
// @ts-expect-error runId is a string: a wrong input must not compile (an \`any\` client would)
await client.runs.get.query({ runId: 42 }).catch(() => undefined);
// @ts-expect-error no such procedure
void client.runs.noSuchProcedure;
console.log(JSON.stringify({ status, strategies: strategies.length }));
`,
    );
    const tsc = await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { cwd: dir, timeoutMs: 120_000 });
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
    const r = await run(process.execPath, [join(dir, "out", "script.js")], { cwd: dir, env: { ...env, SWITCHYARD_URL: server?.url ?? "" } });
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as { status: string; strategies: number };
    expect(printed.status).toBe("ok");
    expect(printed.strategies).toBeGreaterThan(0);
  });

  it("`npx ./<tarball> start` installs the package on the fly and serves the dashboard from its dist/", async () => {
    // npx installs the tarball and its dependencies again, into the npm cache's _npx/ directory,
    // from the same loopback registry. better-sqlite3 gets the module the global install compiled,
    // as a local prebuild (prebuild-install's documented `<package>_local_prebuilds` setting), so
    // the test does not compile it a second time. The path is relative: npx runs an absolute path
    // to an existing file as a command instead of installing it.
    const sqlite = join(installed, "node_modules", "better-sqlite3");
    const sqliteVersion = (JSON.parse(readFileSync(join(sqlite, "package.json"), "utf8")) as { version: string }).version;
    const prebuilds = join(tmp, "prebuilds");
    mkdirSync(prebuilds, { recursive: true });
    // the name prebuild-install looks for (glibc Linux and macOS have no libc part)
    const prebuild = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    execFileSync("tar", ["-czf", join(prebuilds, prebuild), "-C", sqlite, "build/Release/better_sqlite3.node"]);
    const log = join(tmp, "npx-modules.log");
    const npxEnv = recordingEnv(log, { ...env, SWITCHYARD_HOME: join(tmp, "npx-home"), npm_config_better_sqlite3_local_prebuilds: prebuilds });
    const port = await freePort();
    const started = Date.now();
    const args = ["--yes", "--cache", join(tmp, "npm-cache"), "--registry", `${registry?.url ?? ""}/`, `./${basename(tarball)}`, "start", "--port", String(port)];
    const npx = await startYard("npx", args, npxEnv, 300_000, { cwd: tmp, group: true });
    try {
      process.stderr.write(`[install] npx start up in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
      const page = await fetch(`${npx.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<div id="root">/);
      const health = (await (await fetch(`${npx.url}/health`)).json()) as { status: string };
      expect(health.status).toBe("ok");
      // the server that answers is the copy npx installed, running its dist/ (not the global one on PATH)
      const modules = loadedModules(log);
      const inNpxPackage = new RegExp(`/_npx/[^/]+/node_modules/${pkg.name}/(.*)$`);
      const own = modules.flatMap((u) => inNpxPackage.exec(u)?.[1] ?? []).filter((f) => !f.startsWith("node_modules/"));
      expect(own).toContain("dist/yard.mjs");
      expect(own.filter((f) => !f.startsWith("dist/") && f !== "bin/yard.mjs")).toEqual([]);
      expect(loadedPackages(modules, ["tsx"])).toEqual([]);
    } finally {
      await npx.stop();
    }
  });
});
