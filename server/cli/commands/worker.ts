import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import type { WorkerInfo } from "../../../shared/workers";
import { table } from "../io";
import { examples, jsonOption, local, required, type Cli } from "./common";
import { CLI_VERSION } from "../version";

/** A capacity: 1 to 1000 agents at once. */
function capacity(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError("expected a whole number from 1 to 1000");
  return n;
}

const STATE_TEXT: Record<WorkerInfo["state"], string> = {
  new: "never connected",
  connected: "connected",
  disconnected: "disconnected",
  lost: "lost",
  revoked: "revoked",
};

/**
 * `yard worker`: run agents for a server on this machine; `yard worker token create|revoke`,
 * `yard worker list`, `yard worker drain` manage the workers of a server.
 */
export function registerWorker(program: Command, cli: Cli): void {
  const worker = program
    .command("worker")
    // its options (--name, --token...) before a subcommand only: `worker token create --name x` is create's
    .enablePositionalOptions()
    .description("run agents' CLIs on this machine for a server (with --server, --token, --name), or manage workers (token, list, drain)")
    .option("--server <url>", "the server as this machine reaches it (default: SWITCHYARD_URL)")
    .option("--token <token>", "this worker's token, from `yard worker token create` (default: SWITCHYARD_WORKER_TOKEN)")
    .option("--name <name>", "this worker's name, as its token was made for (default: the name in the token)")
    .option("--capacity <n>", "agents it runs at once", capacity, 8)
    .option("--labels <labels>", "comma-separated labels spawns can ask for (agents.spawn labels)")
    .option("--home <dir>", "its data dir: clones, worktrees, agents' folders (default: ~/.switchyard-worker/<name>)")
    .action(async (opts: { server?: string; token?: string; name?: string; capacity: number; labels?: string; home?: string }) => {
      const env = cli.io.env;
      const server = opts.server ?? env.SWITCHYARD_URL;
      const token = opts.token ?? env.SWITCHYARD_WORKER_TOKEN;
      if (!server) throw new Error("yard worker needs the server's URL: --server http://host:7422 (or SWITCHYARD_URL)");
      if (!token) throw new Error("yard worker needs its token: --token (or SWITCHYARD_WORKER_TOKEN); make one on the server with `yard worker token create --name <name>`");
      const claimed = token.split(".")[1];
      const name = opts.name ?? claimed;
      if (!name) throw new Error("this is not a worker token (they read syw.<name>.<secret>): make one with `yard worker token create --name <name>`");
      if (claimed !== name) throw new Error(`the token was made for worker "${claimed}", not "${name}"`);
      const labels = (opts.labels ?? "")
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean);
      const home = resolve(opts.home ?? join(homedir(), ".switchyard-worker", name));
      const { WorkerRuntime } = await import("../../workers/worker-runtime");
      const runtime = new WorkerRuntime({
        serverUrl: server,
        token,
        name,
        capacity: opts.capacity,
        labels,
        home,
        version: CLI_VERSION,
        commands: parseCommands(env.SWITCHYARD_AGENT_COMMANDS),
        log: (line) => cli.note(`[worker ${name}] ${line}`),
      });
      const stop = () => void runtime.stop().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      cli.note(`worker ${name}: connecting to ${server} (capacity ${opts.capacity}${labels.length ? `, labels ${labels.join(",")}` : ""}, home ${home})`);
      await runtime.start();
      cli.exitCode = undefined; // keeps running until a signal
    });
  local(worker);
  examples(
    worker,
    "yard worker token create --name build-2          # on the server's machine",
    "yard worker --server http://10.0.0.1:7422 --token syw.build-2.… --capacity 8 --labels gpu",
    "yard worker list",
  );

  const tokens = worker.command("token").description("make or revoke a worker's token");
  examples(tokens, "yard worker token create --name build-2", "yard worker token revoke build-2");
  const create = tokens
    .command("create")
    .description("a new token for a worker (registers the name; shown once; an earlier token of that name stops working)")
    .addOption(required("--name <name>", "the worker's name: lowercase letters, digits, dots, dashes, underscores"))
    .action(async (opts: { name: string; json?: boolean }, self: Command) => {
      const made = await (await cli.client(self)).workers.createToken.mutate({ name: opts.name });
      if (opts.json) return cli.json(made);
      cli.print(made.token);
      cli.note(`worker ${made.name}'s token (shown once). On the worker's machine:\n  yard worker --server ${cli.url} --token ${made.token}`);
    });
  jsonOption(create);
  examples(create, "yard worker token create --name build-2");
  const revoke = tokens
    .command("revoke")
    .description("revoke a worker's token: its connection is cut, its agents interrupted once it is lost")
    .argument("<name>", "the worker")
    .action(async (name: string, _opts: unknown, self: Command) => {
      await (await cli.client(self)).workers.revoke.mutate({ name });
      cli.print(`worker ${name}: token revoked`);
    });
  examples(revoke, "yard worker token revoke build-2");

  const list = worker
    .command("list")
    .description("the workers of the server: state, capacity, running agents, labels, CLIs, last heartbeat")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const all = await (await cli.client(self)).workers.list.query();
      if (opts.json) return cli.json(all);
      if (all.length === 0) return cli.print("No workers. Register one with `yard worker token create --name <name>`, then run `yard worker` on its machine.");
      const now = Date.now();
      cli.print(
        table(
          all,
          [
            { header: "NAME", value: (w) => w.name },
            { header: "STATE", value: (w) => `${STATE_TEXT[w.state]}${w.drained ? ", drained" : ""}` },
            { header: "AGENTS", value: (w) => `${w.runningAgents}/${w.capabilities?.capacity ?? "?"}`, align: "right" },
            { header: "HOST", value: (w) => w.capabilities?.hostname ?? "" },
            { header: "LABELS", value: (w) => w.capabilities?.labels.join(",") ?? "" },
            { header: "CLIS", value: (w) => (w.capabilities?.providers ?? []).map((p) => (p.version ? `${p.name} ${p.version.split(" ")[0]}` : p.name)).join(", "), flex: true },
            { header: "FREE", value: (w) => (w.capabilities?.diskFree != null ? `${(w.capabilities.diskFree / 1e9).toFixed(1)} GB` : ""), align: "right" },
            { header: "BEAT", value: (w) => (w.heartbeatAt ? `${Math.max(0, Math.round((now - Date.parse(w.heartbeatAt)) / 1000))}s ago` : "never"), align: "right" },
          ],
          { width: cli.width, style: cli.style },
        ),
      );
    });
  jsonOption(list);
  examples(list, "yard worker list", "yard worker list --json");

  const drain = worker
    .command("drain")
    .description("no new agents on a worker (its running agents finish), for maintenance; --undo takes agents again")
    .argument("<name>", "the worker")
    .option("--undo", "take new agents again")
    .action(async (name: string, opts: { undo?: boolean }, self: Command) => {
      const w = await (await cli.client(self)).workers.drain.mutate({ name, drained: !opts.undo });
      cli.print(w.drained ? `worker ${name}: drained (${w.runningAgents} agent(s) still running finish there)` : `worker ${name}: takes new agents again`);
    });
  examples(drain, "yard worker drain build-2", "yard worker drain build-2 --undo");
}

/** SWITCHYARD_AGENT_COMMANDS (`claude=/opt/claude,codex=/usr/bin/codex`) as a map. */
function parseCommands(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (value ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}
