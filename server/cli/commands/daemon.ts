import type { Command } from "commander";
import type { SwitchyardClient } from "../../client";
import type { ErrorData } from "../../../shared/errors";
import { statusPaint, table } from "../io";
import { collect, examples, jsonOption, required, wholeNumber, type Cli } from "./common";

/** A daemon as the client receives it. */
type DaemonSummary = Awaited<ReturnType<SwitchyardClient["daemons"]["list"]["query"]>>[number];

const DAEMON = "<daemon>";
const DAEMON_HELP = "the daemon's id or name";

/** Parse a payload as JSON when it is JSON, else keep the text. */
function payloadOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A daemon by id or name, else a root directory (a path-like argument, or no daemon of that name). */
async function resume(client: SwitchyardClient, ref: string) {
  if (/[\\/]/.test(ref) || ref.startsWith(".") || ref.startsWith("~")) return client.daemons.resume.mutate({ path: ref });
  try {
    return await client.daemons.resume.mutate({ id: ref });
  } catch (err) {
    const notFound = (err as { data?: Partial<ErrorData> }).data?.appCode === "DAEMON_NOT_FOUND";
    if (!notFound || ref.startsWith("daemon_")) throw err;
    return client.daemons.resume.mutate({ path: ref });
  }
}

/** A daemon as one line: "reviewer (daemon_…): running, 2 queued of 100". */
function daemonLine(verb: string, d: DaemonSummary, cli: Cli): string {
  const { bold } = cli.style;
  return `${verb} ${bold(d.name)} (${d.id}): ${statusPaint(cli.style, d.status)(d.status)}, ${d.queued_event_count} queued of ${d.event_queue_capacity}${d.error ? `; error: ${d.error}` : ""}`;
}

/** `yard daemon snapshot`: one field a line. */
function describeDaemon(d: DaemonSummary): string {
  const rows: Array<[string, string | number | undefined]> = [
    ["daemon", `${d.name} (${d.id})`],
    ["status", `${d.status}${d.loop_status ? ` · loop ${d.loop_status}` : ""}${d.daemon_state ? ` · ${d.daemon_state}` : ""}`],
    ["model", d.model],
    ["queue", `${d.queued_event_count} queued, ${d.pending_event_count} pending, capacity ${d.event_queue_capacity}`],
    ["in flight", d.inflight_event ? JSON.stringify(d.inflight_event) : undefined],
    ["iterations", d.total_iterations],
    ["result", d.result],
    ["error", d.error],
    ["saved", d.saved_at],
    ["persisted", d.persist_path],
  ];
  return rows
    .filter((r): r is [string, string | number] => r[1] !== undefined && r[1] !== "")
    .map(([k, v]) => `${k.padEnd(11)}${v}`)
    .join("\n");
}

type SpawnOptions = { task: string; name?: string; model?: string; system?: string; capacity?: number; wakeMs?: number; watch?: string[]; persistPath?: string; json?: boolean };

export function registerDaemon(program: Command, cli: Cli): void {
  const daemon = program.command("daemon").description("daemon agents: long-lived agents fed by a durable trigger queue");
  examples(daemon, 'yard daemon spawn --task "Summarize each change you are sent." --name reviewer --model mock/echo', "yard daemon list");

  const spawn = daemon
    .command("spawn")
    .description("start a daemon agent")
    .addOption(required("--task <text>", "what it does with each trigger"))
    .option("--name <name>", "a name to call it by")
    .option("--model <provider/model>", "its model (mock/echo needs no key)")
    .option("--system <text>", "its system prompt")
    .option("--capacity <n>", "its trigger queue's capacity", wholeNumber)
    .option("--wake-ms <n>", "wake it this often without a trigger", wholeNumber)
    .option("--watch <path>", "trigger it when this path changes (repeatable)", collect)
    .option("--persist-path <dir>", "where its state is saved (resume it from there)")
    .action(async (opts: SpawnOptions, self: Command) => {
      const d = await (await cli.client(self)).daemons.spawn.mutate({
        task: opts.task,
        name: opts.name,
        model: opts.model,
        system: opts.system,
        eventQueueCapacity: opts.capacity,
        wakeIntervalMs: opts.wakeMs,
        watchPaths: opts.watch,
        persistPath: opts.persistPath,
      });
      if (opts.json) return cli.json(d);
      cli.print(`${daemonLine("Spawned", d, cli)}\nTrigger it: yard daemon trigger ${d.name} '{"k":1}'`);
    });
  jsonOption(spawn);
  examples(spawn, 'yard daemon spawn --task "Echo triggers." --name echo --model mock/echo', 'yard daemon spawn --task "Review changed files." --watch ./src --wake-ms 60000');

  const trigger = daemon
    .command("trigger")
    .description("queue a trigger for a daemon (resolves once it is durable)")
    .argument(DAEMON, DAEMON_HELP)
    .argument("<payload...>", "JSON, or text")
    .action(async (ref: string, payload: string[], opts: { json?: boolean }, self: Command) => {
      const r = await (await cli.client(self)).daemons.trigger.mutate({ id: ref, payload: payloadOf(payload.join(" ")) });
      if (opts.json) return cli.json(r);
      cli.print(`Queued as #${r.seq}`);
    });
  jsonOption(trigger);
  examples(trigger, `yard daemon trigger reviewer '{"kind":"file_changed","path":"src/lib.rs"}'`);

  const acts: Array<[string, string, string, (c: SwitchyardClient, ref: string) => Promise<DaemonSummary>]> = [
    ["stop", "stop a daemon (its queue and state are kept)", "Stopped", (c, id) => c.daemons.stop.mutate({ id })],
    ["resume", "start a stopped daemon again, by id, name or its root directory", "Resumed", resume],
  ];
  for (const [name, description, verb, run] of acts) {
    const cmd = daemon
      .command(name)
      .description(description)
      .argument(DAEMON, name === "resume" ? "the daemon's id or name, or its root directory" : DAEMON_HELP)
      .action(async (ref: string, opts: { json?: boolean }, self: Command) => {
        const d = await run(await cli.client(self), ref);
        if (opts.json) return cli.json(d);
        cli.print(daemonLine(verb, d, cli));
      });
    jsonOption(cmd);
    examples(cmd, `yard daemon ${name} reviewer`);
  }

  const snapshot = daemon
    .command("snapshot")
    .description("a daemon's state: status, queue, iterations, last result")
    .argument(DAEMON, DAEMON_HELP)
    .action(async (ref: string, opts: { json?: boolean }, self: Command) => {
      const d = await (await cli.client(self)).daemons.snapshot.query({ id: ref });
      if (opts.json) return cli.json(d);
      cli.print(describeDaemon(d));
    });
  jsonOption(snapshot);
  examples(snapshot, "yard daemon snapshot reviewer --json");

  const list = daemon
    .command("list")
    .description("daemons, with their status and queue (their models: yard daemon snapshot, or --json)")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const all = await (await cli.client(self)).daemons.list.query();
      if (opts.json) return cli.json(all);
      if (all.length === 0) return cli.print('No daemons. Spawn one with: yard daemon spawn --task "..." --model mock/echo');
      const { style } = cli;
      cli.print(
        table(
          all,
          [
            { header: "NAME", value: (d) => d.name, flex: true },
            { header: "STATUS", value: (d) => d.status, paint: (v) => statusPaint(style, v)(v) },
            { header: "QUEUE", value: (d) => `${d.queued_event_count}/${d.event_queue_capacity}`, align: "right" },
            { header: "ID", value: (d) => d.id },
          ],
          { width: cli.width, style },
        ),
      );
    });
  jsonOption(list);
  examples(list, "yard daemon list", "yard daemon list --json | jq '.[] | select(.status == \"running\") | .id'");

  const del = daemon
    .command("delete")
    .description("delete a daemon and its queue")
    .argument(DAEMON, DAEMON_HELP)
    .action(async (ref: string, opts: { json?: boolean }, self: Command) => {
      const r = await (await cli.client(self)).daemons.delete.mutate({ id: ref });
      if (opts.json) return cli.json(r);
      cli.print(`Deleted ${ref}`);
    });
  jsonOption(del);
  examples(del, "yard daemon delete reviewer");
}
