import { createInterface } from "node:readline/promises";
import type { Command } from ".";
import type { BusEvent } from "../../../shared/events";
import type { PendingRequest } from "../../../shared/runs";
import type { SwitchyardClient } from "../../client";
import { clientFrom, connectionOptions, explain, parse } from "./common";

/** Print a run's events as they stream; answer its requests at the prompt. Resolves with the exit code. */
export async function followRun(client: SwitchyardClient, runId: string, afterId: number, out = process.stdout): Promise<number> {
  const interactive = process.stdin.isTTY ?? false;
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
              const code = render(e);
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
      case "run.warning":
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

const firstLine = (s: string) => {
  const l = s.split("\n").find((x) => x.trim()) ?? "";
  return l.length > 160 ? `${l.slice(0, 160)}…` : l;
};

export const run: Command = {
  summary: "run a strategy and stream it: yard run <strategy> [--input TEXT] [--model M] [--cwd DIR]",
  async run(args) {
    const { values, positionals } = parse(args, { ...connectionOptions, input: { type: "string" }, model: { type: "string" }, cwd: { type: "string" } }, true);
    const strategyPath = positionals[0];
    if (!strategyPath) throw new Error("usage: yard run <strategy file or id> [--input TEXT] [--model provider/model] [--cwd DIR]");
    const { url, client } = clientFrom(values);
    try {
      const prepared = await client.runs.prepare.mutate({ strategyPath, cwd: values.cwd ?? process.cwd(), modelOverride: values.model });
      const { lastId } = await client.events.count.query({});
      const following = followRun(client, prepared.runId, lastId);
      await client.runs.start.mutate({ runId: prepared.runId, input: values.input ?? "" });
      return await following;
    } catch (err) {
      throw explain(err, url);
    }
  },
};

export const cont: Command = {
  summary: "continue a finished run: yard continue <runId> --input TEXT",
  async run(args) {
    const { values, positionals } = parse(args, { ...connectionOptions, input: { type: "string" }, model: { type: "string" }, cwd: { type: "string" } }, true);
    const runId = positionals[0];
    if (!runId || values.input === undefined) throw new Error("usage: yard continue <runId> --input TEXT");
    const { url, client } = clientFrom(values);
    try {
      await client.runs.prepare.mutate({ runId, modelOverride: values.model, cwd: values.cwd });
      const { lastId } = await client.events.count.query({});
      const following = followRun(client, runId, lastId);
      await client.runs.continue.mutate({ runId, input: values.input });
      return await following;
    } catch (err) {
      throw explain(err, url);
    }
  },
};

export const runsList: Command = {
  summary: "list runs: yard runs [--cwd DIR] [--json]",
  async run(args) {
    const { values } = parse(args, { ...connectionOptions, cwd: { type: "string" }, json: { type: "boolean", default: false } });
    const { url, client } = clientFrom(values);
    try {
      const list = await client.runs.list.query({ cwd: values.cwd });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return 0;
      }
      if (list.length === 0) process.stdout.write("No runs yet. Start one with: yard run <strategy>\n");
      for (const r of list) process.stdout.write(`${r.runId}  ${r.status.padEnd(9)}  ${r.startedAt}  ${r.strategyName}  (${r.cwd})\n`);
      return 0;
    } catch (err) {
      throw explain(err, url);
    }
  },
};
