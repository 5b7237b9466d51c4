#!/usr/bin/env node
// `npm run build` (and `npm pack`'s prepack): everything an installed package runs, under dist/.
//   dist/web/                the dashboard (vite build)
//   dist/yard.mjs + chunks/  the CLI; the server is a separate chunk that only `yard start` (and
//                            the other commands that run server code) import, so client commands
//                            such as `yard health` or `yard ask` load no Fastify, SQLite or AI SDK
//   dist/client/index.js     the typed client (`<package>/client`), its declarations in dist/types/client.d.ts
// `node scripts/build.mjs cli` builds only the CLI (what bin/yard.mjs does when the sources changed);
// `--outdir <dir>` puts it elsewhere (it must stay under the package root, which it finds upwards);
// `--metafile <file>` writes esbuild's metafile there (which sources each chunk holds).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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
 * Packages bundled into the CLI instead of loaded from node_modules, because every `yard` command
 * loads them:
 * - commander: CommonJS, so importing it from ESM runs Node's CJS export scanner (cjs-module-lexer)
 *   and the CJS loader over its six files, ~8 ms of CPU at every start; bundled it is plain code
 *   in the entry. Its `require("node:events")`... go through the `require` of BANNER.
 * - the typed client (of the commands that talk to a server): the tRPC client (with the parts of
 *   @trpc/server it imports, tree-shaken) and the EventSource ponyfill, ~25 files otherwise.
 * The server's own imports of @trpc/server stay external, so the server runs the package as installed.
 */
const BUNDLED_PACKAGES = ["commander", "@trpc/client", "eventsource", "eventsource-parser"];
const inPackage = (path, name) => path === name || path.startsWith(`${name}/`);

const bundlePackages = {
  name: "bundle-cli-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (BUNDLED_PACKAGES.some((name) => inPackage(args.path, name))) return undefined;
      const fromClient = /[\\/]node_modules[\\/]@trpc[\\/]client[\\/]/.test(args.importer);
      if (fromClient && inPackage(args.path, "@trpc/server")) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** A `require` for the CommonJS bundled into ESM chunks (commander requires Node's built-ins). */
const BANNER = 'import { createRequire as __yardCreateRequire } from "node:module";\nconst require = __yardCreateRequire(import.meta.url);';

/**
 * The CLI bundle: dist/yard.mjs plus its chunks. `splitting` keeps each dynamic import (the
 * server in `yard start`, the MCP server in `yard mcp`, the copier in `yard db copy`, the client
 * of commands that talk to a server) in its own chunk, so their static imports are not hoisted
 * into the entry.
 */
export async function buildCli(outdir = dist, { metafile } = {}) {
  const { build } = await import("esbuild");
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const { packages: _external, ...options } = esbuildOptions;
  const result = await build({
    ...options,
    plugins: [bundlePackages],
    banner: { js: BANNER },
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
  writeFileSync(join(outdir, CLI_INPUTS), `${JSON.stringify(cliInputs(result.metafile))}\n`);
  if (metafile) writeFileSync(metafile, JSON.stringify(result.metafile));
}

/**
 * Beside the bundle (not in the package): the sources it was built from, relative to the root.
 * In a clone, bin/yard.mjs runs the bundle when none of them is newer than it or gone: a stat of
 * each, instead of walking server/ and shared/ at every `yard` command.
 */
export const CLI_INPUTS = "yard.inputs.json";

function cliInputs(metafile) {
  return Object.keys(metafile.inputs).filter((p) => !p.startsWith("node_modules/") && !p.includes(":")).sort();
}

/** The typed client as a small module of its own: `import { createSwitchyardClient } from "<package>/client"`. */
export async function buildClient() {
  const { build } = await import("esbuild");
  await build({ ...esbuildOptions, entryPoints: [join(root, "server", "client", "index.ts")], outfile: join(dist, "client", "index.js") });
}

/**
 * The client's declarations: one self-contained file, dist/types/client.d.ts, that a user's script
 * type-checks with skipLibCheck off having installed only our `dependencies` (no @types/*). Made in
 * three steps:
 * 1. tsc emits declarations for server/client/index.ts into a scratch dir. The router's root config
 *    there says `ctx: object`: the client never sees the server's context, and the emitted
 *    `ctx: Context` would drag in the services (the store, drizzle, better-sqlite3, the AI SDK).
 * 2. They may reach only server/client/, the AppRouter (server/trpc/router.d.ts: every procedure's
 *    input and output) and shared/ (the wire types); the build fails naming a server module that
 *    a procedure's output reaches (return a shared/ type instead).
 * 3. dts-bundle-generator joins them into one file and inlines @trpc/client's types: its root
 *    declarations also declare the WebSocket link, whose types import `ws` (so @types/ws, which
 *    with NodeNext resolution does not even have the `ws.WebSocket` tRPC names). The bundle
 *    imports only @trpc/server and zod, dependencies that ship their own types.
 */
export function buildTypes() {
  const out = join(dist, "types");
  const scratch = join(dist, ".types-emit");
  rmSync(out, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
  try {
    const entry = emitClientDeclarations(scratch);
    checkReached(scratch, entry);
    const bundle = bundleDeclarations(scratch, entry);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "client.d.ts"), bundle);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Step 1: tsc's declarations of the client and what it imports, `ctx: object` in the router's. */
function emitClientDeclarations(outDir) {
  const ts = require("typescript");
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
    outDir,
  };
  const program = ts.createProgram([join(root, "server", "client", "index.ts")], options);
  const result = program.emit(undefined, undefined, undefined, true, { afterDeclarations: [withoutServerContext(ts)] });
  const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
    throw new Error(`declarations failed:\n${ts.formatDiagnostics(errors, host)}`);
  }
  return join(outDir, "server", "client", "index.d.ts");
}

/** `import("./context").Context` (the tRPC root config's ctx) becomes `object`. */
function withoutServerContext(ts) {
  const isContext = (node) =>
    ts.isImportTypeNode(node) &&
    ts.isLiteralTypeNode(node.argument) &&
    ts.isStringLiteral(node.argument.literal) &&
    /(^|\/)trpc\/context(\.js)?$|^\.\/context(\.js)?$/.test(node.argument.literal.text) &&
    node.qualifier !== undefined &&
    ts.isIdentifier(node.qualifier) &&
    node.qualifier.text === "Context";
  return (context) => {
    const visit = (node) => (isContext(node) ? context.factory.createKeywordTypeNode(ts.SyntaxKind.ObjectKeyword) : ts.visitEachChild(node, visit, context));
    return (file) => ts.visitNode(file, visit);
  };
}

/** What the client's declarations may reach, relative to the emit dir. */
const CLIENT_DECLARATIONS = [/^server\/client\//, /^server\/trpc\/router\.d\.ts$/, /^shared\//];

/** Step 2: follow the relative imports from `entry`; throw at one outside CLIENT_DECLARATIONS. */
function checkReached(dir, entry) {
  const reached = new Set();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop();
    if (reached.has(file)) continue;
    reached.add(file);
    const rel = relative(dir, file);
    if (!CLIENT_DECLARATIONS.some((re) => re.test(rel))) {
      throw new Error(`declarations: the client's types reach ${rel}, a server module (a procedure's output should be a shared/ type)`);
    }
    for (const m of readFileSync(file, "utf8").matchAll(/(?:from |import\()["'](\.{1,2}\/[^"']*)["']/g)) {
      const target = join(dirname(file), (m[1] ?? "").replace(/\.js$/, ""));
      pending.push(existsSync(`${target}.d.ts`) ? `${target}.d.ts` : join(target, "index.d.ts"));
    }
  }
}

/** Packages the bundle may import from: dependencies of ours that ship their own types. */
const BUNDLE_IMPORTS = [/^@trpc\/server(\/|$)/, /^zod(\/|$)/];

/** Step 3: one file, @trpc/client inlined. */
function bundleDeclarations(dir, entry) {
  const { generateDtsBundle } = require("dts-bundle-generator");
  const config = join(dir, "tsconfig.json");
  const compilerOptions = { target: "ES2022", module: "ESNext", moduleResolution: "Bundler", strict: true, skipLibCheck: true, types: ["node"] };
  writeFileSync(config, JSON.stringify({ compilerOptions, files: [relative(dir, entry)] }));
  const [bundle = ""] = generateDtsBundle(
    [{ filePath: entry, libraries: { inlinedLibraries: ["@trpc/client"] }, output: { exportReferencedTypes: false, noBanner: true } }],
    { preferredConfigPath: config },
  );
  const imported = [...bundle.matchAll(/^import .* from ["']([^"']+)["'];?$|import\(["']([^"']+)["']\)/gm)].map((m) => m[1] ?? m[2] ?? "");
  const stray = imported.filter((spec) => !BUNDLE_IMPORTS.some((re) => re.test(spec)));
  if (stray.length > 0) throw new Error(`declarations: the client's bundle imports ${stray.join(", ")} (only @trpc/server and zod are expected)`);
  if (/^\/\/\/ <reference/m.test(bundle)) throw new Error("declarations: the client's bundle references other declarations");
  return `// The typed client of ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).name}: generated by scripts/build.mjs\n${bundle}`;
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
  const flags = {};
  const what = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--outdir" || args[i] === "--metafile") flags[args[i].slice(2)] = resolve(args[++i] ?? "");
    else what.push(args[i]);
  }
  const steps = {
    web: buildWeb,
    cli: () => buildCli(flags.outdir ?? dist, { metafile: flags.metafile }),
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
