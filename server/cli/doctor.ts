import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";
import { createSwitchyardClient } from "../client";
import { loadConfig, type Config } from "../config";
import { helpOf } from "./doctor-providers";
import { storeCheck, type AccountCounts } from "./doctor-store";

/**
 * `yard doctor`: what a user needs, checked, each with how to fix it (the database: doctor-store.ts). "fail" is something
 * Switchyard cannot work without (exit 1); "warn" is something a feature needs; "info" an
 * agent CLI that is not installed while another one is (only the ones a user wants matter).
 */

export type CheckStatus = "ok" | "info" | "warn" | "fail";

export interface Check {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export interface DoctorReport {
  ok: boolean;
  version: string;
  checks: Check[];
}

export interface DoctorOptions {
  env: Record<string, string | undefined>;
  repoRoot: string;
  cwd: string;
  version: string;
  /** The server to ask for registered accounts (else the database is read). */
  url: string;
  token?: string;
  /** Per `--version` of a CLI. */
  timeoutMs?: number;
}

export async function runDoctor(o: DoctorOptions): Promise<DoctorReport> {
  const checks: Check[] = [nodeCheck(process.versions.node, enginesOf(o.repoRoot)), ...(await gitChecks(o))];
  let config: Config;
  try {
    config = loadConfig(o.env);
  } catch (err) {
    checks.push({ id: "config", title: "config", status: "fail", detail: (err as Error).message, fix: "fix the variables named above (see the README's configuration table)" });
    config = loadConfig({});
  }
  const [cliChecks, dataDir, port, store, fromServer] = await Promise.all([
    agentCliChecks(o, config),
    Promise.resolve(dataDirCheck(config.home)),
    portCheck(config, o.token),
    storeCheck(config, o.env),
    serverAccountCounts(o),
  ]);
  const counts = fromServer ?? store.accounts;
  const anyCli = cliChecks.some((c) => c.found);
  for (const c of cliChecks) if (!c.found && anyCli && c.check.status === "warn") c.check.status = "info";
  checks.push(...cliChecks.flatMap((c) => (c.found ? [c.check, credentialCheck(c.provider, c.command, counts, o.env)] : [c.check])));
  checks.push(modelsCheck(config), dataDir, store.check, port, ...chromiumCheck(o));
  // on a worker's machine: does the server take its token (yard worker)
  const workerToken = o.env.SWITCHYARD_WORKER_TOKEN;
  if (workerToken) checks.push(await workerCheck(o.url, workerToken));
  return { ok: checks.every((c) => c.status !== "fail"), version: o.version, checks };
}

/** Run a command; its first output line, or null when it cannot run. */
function firstLine(command: string, args: string[], o: { env: DoctorOptions["env"]; cwd?: string; timeoutMs?: number }): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(command, args, { env: o.env as NodeJS.ProcessEnv, cwd: o.cwd, timeout: o.timeoutMs ?? 5000, encoding: "utf8" }, (err, stdout) => {
      if (err) return resolve(null);
      resolve(stdout.split("\n").find((l) => l.trim())?.trim() ?? "");
    });
  });
}

function enginesOf(repoRoot: string): string | undefined {
  return (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { engines?: { node?: string } }).engines?.node;
}

/** Does a version satisfy an npm range (`>=20.19`, `^22.12.0`, `20.x`, `a || b`)? null when the range is not understood. */
export function satisfies(version: string, range: string): boolean | null {
  const v = version.replace(/^v/, "").split(".").map(Number);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  const one = (c: string): boolean | null => {
    const m = /^(>=|>|<=|<|=|\^|~)?v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(c);
    if (!m) return null;
    const [, op = "", maj, min, pat] = m;
    const want = [Number(maj), min && /\d/.test(min) ? Number(min) : 0, pat && /\d/.test(pat) ? Number(pat) : 0];
    const d = cmp(v, want);
    if (op === ">=") return d >= 0;
    if (op === ">") return d > 0;
    if (op === "<=") return d <= 0;
    if (op === "<") return d < 0;
    if (op === "^") return d >= 0 && v[0] === want[0];
    if (op === "~") return d >= 0 && v[0] === want[0] && v[1] === want[1];
    if (!min || !/\d/.test(min)) return v[0] === want[0];
    return op === "=" || (pat && /\d/.test(pat)) ? d === 0 : v[0] === want[0] && v[1] === want[1];
  };
  let understood = true;
  const result = range.split("||").some((alt) =>
    alt
      .trim()
      .split(/\s+/)
      .every((c) => {
        const r = one(c);
        if (r === null) understood = false;
        return r === true;
      }),
  );
  return understood ? result : null;
}

export function nodeCheck(version: string, range: string | undefined): Check {
  const title = "node";
  if (!range) return { id: "node", title, status: "ok", detail: `v${version}` };
  const ok = satisfies(version, range);
  if (ok === null) return { id: "node", title, status: "warn", detail: `v${version}; cannot read the required range "${range}"` };
  if (ok) return { id: "node", title, status: "ok", detail: `v${version} (needs ${range})` };
  return { id: "node", title, status: "fail", detail: `v${version}, but Switchyard needs ${range}`, fix: `install a Node that matches ${range}: nvm install 22 (or https://nodejs.org)` };
}

async function gitChecks(o: DoctorOptions): Promise<Check[]> {
  const version = await firstLine("git", ["--version"], o);
  if (version === null) return [{ id: "git", title: "git", status: "fail", detail: "git is not on PATH: agents work in git worktrees", fix: "install git: apt-get install git, brew install git, or https://git-scm.com" }];
  const [name, email] = await Promise.all([firstLine("git", ["config", "--get", "user.name"], o), firstLine("git", ["config", "--get", "user.email"], o)]);
  const identity: Check =
    name && email
      ? { id: "git-identity", title: "git identity", status: "ok", detail: `${name} <${email}>` }
      : {
          id: "git-identity",
          title: "git identity",
          status: "warn",
          detail: `user.${name ? "email" : "name"} is not set: an agent's own git commit fails without it`,
          fix: 'git config --global user.name "Your Name" && git config --global user.email you@example.com',
        };
  return [{ id: "git", title: "git", status: "ok", detail: version.replace(/^git version /, "") }, identity];
}

type CliFound = { provider: string; command: string; found: boolean; check: Check };

/** Every agent CLI the server knows (its provider adapters), found as the server finds it, with its version. */
async function agentCliChecks(o: DoctorOptions, config: Config): Promise<CliFound[]> {
  const { PROVIDERS, resolveCommand } = await import("../agents/providers");
  return Promise.all(
    Object.values(PROVIDERS).map(async (adapter): Promise<CliFound> => {
      const base = { provider: adapter.name, command: adapter.defaultCommand };
      const id = `cli-${adapter.name}`;
      if (adapter.name === "fake") return { ...base, found: false, check: { id, title: adapter.name, status: "ok", detail: "built in: the demo agent, no key needed" } };
      const override = config.agentCommands[adapter.name];
      const path = resolveCommand(adapter, { repoRoot: o.repoRoot, pathEnv: o.env.PATH ?? "", override });
      const help = helpOf(adapter.name, adapter.defaultCommand);
      if (!path) {
        const where = override ? `${override} (SWITCHYARD_AGENT_COMMANDS) is not executable` : `${adapter.defaultCommand} is not on PATH`;
        return { ...base, found: false, check: { id, title: adapter.name, status: "warn", detail: `${adapter.displayName}: ${where}`, fix: `${help.install}; or SWITCHYARD_AGENT_COMMANDS=${adapter.name}=/path/to/${adapter.defaultCommand}` } };
      }
      const version = await firstLine(path, ["--version"], { env: o.env, timeoutMs: o.timeoutMs });
      const shown = path.startsWith(o.repoRoot) ? relative(o.repoRoot, path) : path;
      if (version === null) return { ...base, found: true, check: { id, title: adapter.name, status: "warn", detail: `${shown}: \`--version\` failed`, fix: `run ${path} --version to see why; reinstall: ${help.install}` } };
      return { ...base, found: true, check: { id, title: adapter.name, status: "ok", detail: `${version} (${shown})` } };
    }),
  );
}

/** Usable registered accounts per provider from the server, when one answers at `o.url`. */
async function serverAccountCounts(o: DoctorOptions): Promise<AccountCounts | null> {
  try {
    const client = createSwitchyardClient({ url: o.url, token: o.token });
    const list = await Promise.race([client.accounts.list.query({}), new Promise<never>((_, rej) => setTimeout(() => rej(new Error("timeout")), 2000).unref())]);
    const counts: Record<string, number> = {};
    for (const a of list) if (a.status !== "invalid") counts[a.provider] = (counts[a.provider] ?? 0) + 1;
    return { counts, source: `the server at ${o.url}` };
  } catch {
    return null; // no server (or not ours): the store's counts
  }
}

function credentialCheck(provider: string, command: string, accounts: AccountCounts, env: DoctorOptions["env"]): Check {
  const help = helpOf(provider, command);
  const home = env.HOME ?? homedir();
  const n = "counts" in accounts ? (accounts.counts[provider] ?? 0) : 0;
  const found = [
    ...(n > 0 ? [`${n} account${n === 1 ? "" : "s"}`] : []),
    ...help.credentialEnv.filter((v) => env[v]),
    ...help.loginFiles.filter((f) => existsSync(join(home, f))).map((f) => `~/${f}`),
  ];
  const id = `credentials-${provider}`;
  const title = `${provider} key`;
  if (found.length > 0) return { id, title, status: "ok", detail: found.join(", ") };
  const unread = "error" in accounts ? ` (${accounts.error})` : "";
  return { id, title, status: "warn", detail: `no key, token or account found${unread}`, fix: help.credentialHint };
}

function modelsCheck(config: Config): Check {
  const real = [
    ...(config.anthropicApiKey ? ["anthropic/*"] : []),
    ...(config.openaiApiKey ? ["openai/*"] : []),
    ...(existsSync(join(config.home, "providers.json")) ? ["providers.json"] : []),
  ];
  if (real.length > 0) return { id: "models", title: "models", status: "ok", detail: `${real.join(", ")}, mock/*` };
  return { id: "models", title: "models", status: "warn", detail: "only mock/* (no key for real models)", fix: `ANTHROPIC_API_KEY or OPENAI_API_KEY, or a local endpoint in ${join(config.home, "providers.json")}` };
}

export function dataDirCheck(home: string): Check {
  const base = { id: "data-dir", title: "data dir" };
  const fix = `SWITCHYARD_HOME=<a directory you can write>, or fix the permissions of ${home}`;
  if (existsSync(home)) {
    if (!statSync(home).isDirectory()) return { ...base, status: "fail", detail: `${home} is not a directory`, fix };
    const probe = join(home, `.doctor-${process.pid}`);
    try {
      writeFileSync(probe, "");
      rmSync(probe);
      return { ...base, status: "ok", detail: `${home} (writable)` };
    } catch (err) {
      return { ...base, status: "fail", detail: `${home} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, fix };
    }
  }
  let parent = dirname(home);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  try {
    accessSync(parent, constants.W_OK);
    return { ...base, status: "ok", detail: `${home} (made at the first start)` };
  } catch {
    return { ...base, status: "fail", detail: `${home} does not exist and ${parent} is not writable`, fix };
  }
}

function canListen(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve("free")));
  });
}

/** The port `yard start` would take: free, or held by a Switchyard server (fine), or by something else. */
async function portCheck(config: Config, token: string | undefined): Promise<Check> {
  const base = { id: "port", title: "port" };
  if (config.port === 0) return { ...base, status: "ok", detail: "0: a random free port at each start" };
  const state = await canListen(config.host, config.port);
  if (state === "free") return { ...base, status: "ok", detail: `${config.port} is free on ${config.host}` };
  const other = `SWITCHYARD_PORT=${config.port + 1} yard start`;
  if (state !== "EADDRINUSE") return { ...base, status: "fail", detail: `cannot listen on ${config.host}:${config.port} (${state})`, fix: `pick another address or port: SWITCHYARD_HOST, or ${other}` };
  const host = ["0.0.0.0", "::"].includes(config.host) ? "127.0.0.1" : config.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000), headers: token ? { authorization: `Bearer ${token}` } : {} });
    const body = (await res.json()) as { status?: unknown; uptime?: unknown };
    if (body.status === "ok" && typeof body.uptime === "number") return { ...base, status: "ok", detail: `${config.port}: a Switchyard server answers at ${url}` };
  } catch {
    // not an HTTP server, or not ours
  }
  return { ...base, status: "fail", detail: `${config.port} on ${config.host} is taken by another program`, fix: `stop it (lsof -i :${config.port} names it), or ${other}` };
}

/** Chromium for the e2e tests: only in a clone (where playwright.config.ts is). */
function chromiumCheck(o: DoctorOptions): Check[] {
  if (!existsSync(join(o.repoRoot, "playwright.config.ts"))) return [];
  const path = o.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  const base = { id: "chromium", title: "chromium" };
  try {
    accessSync(path, constants.X_OK);
    return [{ ...base, status: "ok", detail: `${path} (for the e2e tests)` }];
  } catch {
    return [{ ...base, status: "warn", detail: `${path} not found: only the e2e tests (npm run test:e2e) need it`, fix: "apt-get install chromium, or CHROMIUM_PATH=/path/to/chromium" }];
  }
}

/** A worker's machine (SWITCHYARD_WORKER_TOKEN set): the server reachable and its token accepted. */
export async function workerCheck(url: string, token: string): Promise<Check> {
  const name = token.split(".")[1] ?? "?";
  const fix = `make a new token on the server (yard worker token create --name ${name}) and set SWITCHYARD_WORKER_TOKEN`;
  try {
    const res = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
    if (res.ok) return { id: "worker", title: "worker", status: "ok", detail: `the server at ${url} accepts worker ${name}'s token (yard worker --server ${url})` };
    if (res.status === 401) return { id: "worker", title: "worker", status: "fail", detail: `the server at ${url} refuses worker ${name}'s token (wrong or revoked)`, fix };
    return { id: "worker", title: "worker", status: "fail", detail: `the server at ${url} answered HTTP ${res.status} to worker ${name}'s token`, fix: "set SWITCHYARD_ALLOWED_HOSTS on the server to the name this machine uses for it" };
  } catch (err) {
    return { id: "worker", title: "worker", status: "fail", detail: `cannot reach the server at ${url}: ${(err as Error).message}`, fix: "check --url / SWITCHYARD_URL and that the server binds an address this machine reaches (SWITCHYARD_HOST with SWITCHYARD_TOKEN)" };
  }
}
