#!/usr/bin/env node
// `npm run build` (and `npm pack`'s prepack): everything an installed package runs, under dist/.
//   dist/web/                the dashboard (vite build)
//   dist/yard.mjs + chunks/  the CLI; the server is a separate chunk that only `yard start` (and
//                            the other commands that run server code) import, so client commands
//                            such as `yard health` or `yard ask` load no Fastify, SQLite or AI SDK
//   dist/client/index.js     the typed client (`<package>/client`), its declarations in dist/types/
// `node scripts/build.mjs cli` builds only the CLI (what bin/yard.mjs does when the sources changed);
// `--outdir <dir>` puts it elsewhere (it must stay under the package root, which it finds upwards).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
const require = createRequire(import.meta.url);

const esbuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  packages: "external",
  target: "node20",
  logLevel: "warning",
};

/**
 * The packages of the typed client, bundled into the CLI instead of loaded from node_modules: the
 * tRPC client (with the parts of @trpc/server it imports, tree-shaken) and the EventSource
 * ponyfill. Node resolves, reads and compiles ~25 files for them at every `yard` command that
 * talks to a server; bundled they are a few KiB of one chunk. The server's own imports of
 * @trpc/server stay external, so the server runs the package as installed.
 */
const CLIENT_PACKAGES = ["@trpc/client", "eventsource", "eventsource-parser"];
const inPackage = (path, name) => path === name || path.startsWith(`${name}/`);

const bundleClientPackages = {
  name: "bundle-client-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (CLIENT_PACKAGES.some((name) => inPackage(args.path, name))) return undefined;
      const fromClient = /[\\/]node_modules[\\/]@trpc[\\/]client[\\/]/.test(args.importer);
      if (fromClient && inPackage(args.path, "@trpc/server")) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/**
 * The CLI bundle: dist/yard.mjs plus its chunks. `splitting` keeps each dynamic import (the
 * server in `yard start`, the MCP server in `yard mcp`, the copier in `yard db copy`, the client
 * of commands that talk to a server) in its own chunk, so their static imports are not hoisted
 * into the entry.
 */
export async function buildCli(outdir = dist) {
  const { build } = await import("esbuild");
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const { packages: _external, ...options } = esbuildOptions;
  const result = await build({
    ...options,
    plugins: [bundleClientPackages],
    entryPoints: { yard: join(root, "server", "cli", "main.ts") },
    // `yard --version` without reading package.json at every start (server/cli/version.ts)
    define: { __YARD_VERSION__: JSON.stringify(version) },
    outdir,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    absWorkingDir: root,
  });
  // chunks of earlier builds (their names carry a content hash) go; the ones just written stay
  const written = new Set(Object.keys(result.metafile.outputs).map((p) => join(root, p)));
  const chunks = join(outdir, "chunks");
  for (const f of readdirSync(chunks)) if (!written.has(join(chunks, f))) rmSync(join(chunks, f), { force: true });
}

/** The typed client as a small module of its own: `import { createSwitchyardClient } from "<package>/client"`. */
export async function buildClient() {
  const { build } = await import("esbuild");
  await build({ ...esbuildOptions, entryPoints: [join(root, "server", "client", "index.ts")], outfile: join(dist, "client", "index.js") });
}

/**
 * Declarations for the client and everything its types reach (the AppRouter: every procedure's
 * input and output), emitted by tsc into dist/types/ with the repository's layout.
 */
export function buildTypes() {
  const ts = require("typescript");
  const out = join(dist, "types");
  rmSync(out, { recursive: true, force: true });
  const options = {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noUncheckedIndexedAccess: true,
    esModuleInterop: true,
    skipLibCheck: true,
    resolveJsonModule: true,
    types: ["node"],
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    outDir: out,
  };
  const program = ts.createProgram([join(root, "server", "client", "index.ts")], options);
  const result = program.emit();
  addExtensions(out);
  const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
    throw new Error(`declarations failed:\n${ts.formatDiagnostics(errors, host)}`);
  }
}

/**
 * The sources import `./x` (bundler resolution); a consumer on `moduleResolution: nodenext` needs
 * `./x.js` or `./x/index.js` in the declarations of an ESM package.
 */
function addExtensions(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      addExtensions(path);
      continue;
    }
    if (!entry.name.endsWith(".d.ts")) continue;
    const text = readFileSync(path, "utf8").replace(/((?:from |import\()["'])(\.{1,2}\/[^"']*)(["'])/g, (whole, before, spec, after) => {
      if (/\.(js|mjs|json)$/.test(spec)) return whole;
      const target = join(dir, spec);
      if (existsSync(`${target}.d.ts`)) return `${before}${spec}.js${after}`;
      if (existsSync(join(target, "index.d.ts"))) return `${before}${spec}/index.js${after}`;
      return whole;
    });
    writeFileSync(path, text);
  }
}

/** The dashboard, built by vite into dist/web/. */
export function buildWeb() {
  const vite = join(dirname(require.resolve("vite/package.json")), "bin", "vite.js");
  const r = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("vite build failed");
}

function size(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + size(join(path, f)), 0);
}

async function main(args) {
  const at = args.indexOf("--outdir");
  const outdir = at >= 0 ? resolve(args[at + 1] ?? "") : dist;
  const what = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
  const steps = {
    web: buildWeb,
    cli: () => buildCli(outdir),
    client: buildClient,
    types: buildTypes,
  };
  const chosen = what.length > 0 ? what : Object.keys(steps);
  const unknown = chosen.filter((s) => !(s in steps));
  if (unknown.length > 0) throw new Error(`unknown step ${unknown.join(", ")} (steps: ${Object.keys(steps).join(", ")})`);
  for (const step of chosen) {
    const started = Date.now();
    await steps[step]();
    process.stdout.write(`built ${step} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  for (const p of ["web", "yard.mjs", "chunks", "client", "types"]) {
    const path = join(dist, p);
    if (existsSync(path)) process.stdout.write(`  ${relative(root, path).padEnd(16)} ${(size(path) / 1024).toFixed(0)} KiB\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`build: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
