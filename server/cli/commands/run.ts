import type { Command } from "commander";
import type { BusEvent } from "../../../shared/events";
import type { PendingRequest } from "../../../shared/runs";
import type { SwitchyardClient } from "../../client";
import { ago, statusPaint, table } from "../io";
import { examples, jsonOption, limitOptions, LIST_LIMIT, listRows, moreHint, required, type Cli } from "./common";

/**
 * Print a run's events as they stream; answer its requests at the prompt. Resolves with the exit
 * code. `json`: each event as a JSON line instead, and no prompt (requests wait for another client).
 */
export async function followRun(client: SwitchyardClient, runId: string, afterId: number, out: { write(s: string): unknown } = process.stdout, json = false): Promise<number> {
  const interactive = !json && (process.stdin.isTTY ?? false);
  // loaded when a run is followed: this file is in the CLI's entry, which every `yard` command loads
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: interactive });
  let lastAgent = "";
  let atLineStart = true;
  // Parallel agents (broadcast) stream at once: one step is shown live, the others' turns are
  // buffered in the order they began and printed whole when the shown one finishes, so their text
  // never interleaves. A buffered turn may finish before it is shown: it is printed and the next
  // one taken, until one still streams (it is then shown live) or none is left.
  type Turn = { step: string; prints: Array<() => void>; done: boolean };
  let shown: string | undefined;
  const held: Turn[] = [];
  const heldTurn = (step: string) => held.findLast((t) => t.step === step && !t.done);
  const show = (step: string, print: () => void) => {
    shown ??= step;
    if (step === shown) return print();
    let turn = heldTurn(step);
    if (!turn) held.push((turn = { step, prints: [], done: false }));
    turn.prints.push(print);
  };
  const finish = (step: string) => {
    if (step !== shown) {
      const turn = heldTurn(step);
      if (turn) turn.done = true;
      return;
    }
    shown = undefined;
    for (let turn = held.shift(); turn; turn = held.shift()) {
      for (const print of turn.prints) print();
      if (!turn.done) {
        shown = turn.step;
        return;
      }
    }
  };
  const write = (s: string) => {
    out.write(s);
    if (s.length) atLineStart = s.endsWith("\n");
  };
  const line = (s: string) => write(`${atLineStart ? "" : "\n"}${s}\n`);
  const answer = async (r: PendingRequest) => {
    if (r.kind === "permission") {
      const a = (await rl.question(`? ${r.agentName} wants ${r.operation} ${r.resource} [y]es / [n]o / [a]lways / ne[v]er: `)).trim().toLowerCase();
      const decision = a.startsWith("a") ? "allow-session" : a.startsWith("v") ? "deny-session" : a.startsWith("y") ? "allow" : "deny";
      await client.runs.respond.mutate({ runId, requestId: r.requestId, decision });
      return;
    }
    const prompt = r.kind === "input" ? `? ${r.agentName}${r.prompt ? `: ${r.prompt}` : ""} > ` : `? ${r.agentName} asks: ${r.question} > `;
    const text = await rl.question(prompt);
    await client.runs.respond.mutate({ runId, requestId: r.requestId, text });
  };

  try {
    return await new Promise<number>((resolve, reject) => {
      const sub = client.runs.onEvents.subscribe(
        { runId, lastEventId: String(afterId) },
        {
          onError: (err) => reject(err),
          onData: ({ data }) => {
            for (const e of data as BusEvent[]) {
              if (json) out.write(`${JSON.stringify(e)}\n`);
              const code = json ? exitCodeOf(e) : render(e);
              if (code !== undefined) {
                sub.unsubscribe();
                resolve(code);
                return;
              }
            }
          },
        },
      );
    });
  } finally {
    rl.close();
  }

  function render(e: BusEvent): number | undefined {
    switch (e.type) {
      case "run.started":
        line(`▶ ${e.payload.strategyName} (run ${runId}${e.payload.segment > 1 ? `, segment ${e.payload.segment}` : ""})`);
        return;
      case "run.warned":
        line(`⚠ ${e.payload.path ? `${e.payload.path}: ` : ""}${e.payload.message}`);
        return;
      case "run.agent_streamed": {
        const ev = e.payload.event;
        const agent = e.payload.agentName;
        const model = e.payload.model ?? "?";
        const step = e.payload.stepKey ?? agent;
        show(step, () => {
          if (agent !== lastAgent) {
            lastAgent = agent;
            line(`\n── ${agent} (${model})`);
          }
          if (ev.type === "text") write(ev.text);
          else if (ev.type === "tool-call") line(`  ⚙ ${ev.toolName} ${ev.args.length > 200 ? `${ev.args.slice(0, 200)}…` : ev.args}`);
          else if (ev.type === "tool-result") line(`  ${ev.status === "completed" ? "✓" : "✗"} ${ev.toolName}: ${firstLine(ev.output)}`);
        });
        if (ev.type === "done") finish(step);
        return;
      }
      case "run.request_opened":
        if (!interactive) {
          line(`⏸ waiting for ${e.payload.request.kind} (request ${e.payload.request.requestId}): answer in the dashboard or with the API`);
          return;
        }
        void answer(e.payload.request).catch((err: Error) => line(`✗ ${err.message}`));
        return;
      case "run.completed": {
        const p = e.payload;
        const usage = p.usage ? ` · ${p.usage.promptTokens} in / ${p.usage.completionTokens} out tokens` : "";
        if (p.status === "completed") {
          line(`\n✔ completed${usage}`);
          return 0;
        }
        line(`\n✘ ${p.status}: ${p.error?.code ?? ""} ${p.error?.message ?? ""}${usage}`);
        return p.status === "cancelled" ? 130 : 1;
      }
      default:
        return;
    }
  }
}

/** The exit code a run's event ends `yard run` with, if it ends it. */
function exitCodeOf(e: BusEvent): number | undefined {
  if (e.type !== "run.completed") return undefined;
  return e.payload.status === "completed" ? 0 : e.payload.status === "cancelled" ? 130 : 1;
}

const firstLine = (s: string) => {
  const l = s.split("\n").find((x) => x.trim()) ?? "";
  return l.length > 160 ? `${l.slice(0, 160)}…` : l;
};

type RunOptions = { input?: string; model?: string; cwd?: string; json?: boolean };

export function registerRun(program: Command, cli: Cli): void {
  const run = program
    .command("run")
    .description("run a strategy and stream it; answers its input, question and permission requests at the prompt")
    .argument("<strategy>", "a strategy file, or the id of one in ./strategies, ./.comma/strategies or ~/.switchyard/strategies")
    .option("--input <text>", "the run's input")
    .option("--model <provider/model>", "run every agent on this model")
    .option("--cwd <dir>", "the run's working directory (default: this one)")
    .option("--json", "print the run's events as JSON lines (no prompt: requests wait for the dashboard)")
    .action(async (strategyPath: string, opts: RunOptions, self: Command) => {
      const client = await cli.client(self);
      const prepared = await client.runs.prepare.mutate({ strategyPath, cwd: opts.cwd ?? process.cwd(), modelOverride: opts.model });
      const { lastId } = await client.events.count.query({});
      const following = followRun(client, prepared.runId, lastId, cli.io.stdout, opts.json);
      await client.runs.start.mutate({ runId: prepared.runId, input: opts.input ?? "" });
      cli.exitCode = await following;
    });
  examples(run, 'yard run demo --input "Plan a team offsite"', "yard run ./strategies/review.yaml --model anthropic/claude-sonnet-4-5 --json > events.jsonl");

  const cont = program
    .command("continue")
    .description("continue a finished run with its conversation restored, and stream it")
    .argument("<runId>", "the run (yard runs lists them)")
    .addOption(required("--input <text>", "what to say next"))
    .option("--model <provider/model>", "run every agent on this model")
    .option("--cwd <dir>", "a new working directory")
    .option("--json", "print the run's events as JSON lines (no prompt)")
    .action(async (runId: string, opts: RunOptions & { input: string }, self: Command) => {
      const client = await cli.client(self);
      await client.runs.prepare.mutate({ runId, modelOverride: opts.model, cwd: opts.cwd });
      const { lastId } = await client.events.count.query({});
      const following = followRun(client, runId, lastId, cli.io.stdout, opts.json);
      await client.runs.continue.mutate({ runId, input: opts.input });
      cli.exitCode = await following;
    });
  examples(cont, 'yard continue 0196c3f5-7a1b-7c2d-8e3f-0a1b2c3d4e5f --input "Now shorten it"');

  const runs = program
    .command("runs")
    .description(`list runs, newest first: the last ${LIST_LIMIT} unless --limit or --all (their directories: --json)`)
    .option("--cwd <dir>", "only the runs of this directory")
    .action(async (opts: { cwd?: string; json?: boolean; limit?: number; all?: boolean }, self: Command) => {
      const client = await cli.client(self);
      const filter = opts.cwd ? { cwd: opts.cwd } : {};
      const { items: list, more } = await listRows((page) => client.runs.list.query({ ...filter, ...page }), opts);
      const hint = async () => {
        if (more) cli.note(moreHint("run", (await client.runs.counts.query(filter)).total - list.length));
      };
      if (opts.json) return (cli.json(list), await hint());
      if (list.length === 0) return cli.print("No runs yet. Start one with: yard run <strategy>");
      const { style } = cli;
      cli.print(
        table(
          list,
          [
            { header: "RUN", value: (r) => r.runId },
            { header: "STATUS", value: (r) => r.status, paint: (v) => statusPaint(style, v)(v) },
            { header: "STARTED", value: (r) => ago(r.startedAt) },
            { header: "STRATEGY", value: (r) => r.strategyName, flex: true },
          ],
          { width: cli.width, style },
        ),
      );
      await hint();
    });
  limitOptions(runs, "runs");
  jsonOption(runs);
  examples(runs, "yard runs", "yard runs --limit 200", "yard runs --cwd ~/code/app --all --json");
}
