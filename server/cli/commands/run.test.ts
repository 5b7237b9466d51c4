import { describe, expect, it } from "vitest";
import type { BusEvent } from "../../../shared/events";
import type { StreamEvent } from "../../../shared/runs";
import type { SwitchyardClient } from "../../client";
import { followRun } from "./run";

/**
 * `followRun` (what `yard run` and `yard continue` print) fed a run's events in a set order, as
 * the server's `runs.onEvents` would deliver them.
 */
function serverSending(events: BusEvent[]): SwitchyardClient {
  const client = {
    runs: {
      onEvents: {
        subscribe: (_input: unknown, handlers: { onData: (d: { data: BusEvent[] }) => void }) => {
          setTimeout(() => handlers.onData({ data: events }), 0);
          return { unsubscribe: () => undefined };
        },
      },
    },
  };
  return client as unknown as SwitchyardClient;
}

let id = 0;
const event = (type: string, payload: unknown) => ({ id: ++id, ts: new Date(0).toISOString(), type, scope: {}, payload }) as unknown as BusEvent;
const streamed = (agentName: string, stepKey: string, ev: StreamEvent) => event("run.agent_streamed", { agentName, model: "mock/demo", stepKey, event: ev });
const done = (agentName: string, stepKey: string) => streamed(agentName, stepKey, { type: "done", result: { text: "", usage: { promptTokens: 0, completionTokens: 0 }, finishReason: "stop" } });

async function printed(events: BusEvent[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await followRun(serverSending(events), "run-1", 0, { write: (s: string) => (out += s) } as unknown as typeof process.stdout);
  return { code, out };
}

describe("followRun", () => {
  it("a broadcast whose second agent finishes first: both are printed whole, then the steps after it", async () => {
    const { code, out } = await printed([
      event("run.started", { strategyName: "Fan", segment: 2 }),
      streamed("slow", "f.0.0", { type: "step-start" }),
      streamed("slow", "f.0.0", { type: "text", text: "slow begins " }),
      streamed("quick", "f.0.1", { type: "step-start" }),
      streamed("quick", "f.0.1", { type: "text", text: "quick, all of it" }),
      done("quick", "f.0.1"),
      streamed("slow", "f.0.0", { type: "text", text: "slow ends" }),
      done("slow", "f.0.0"),
      streamed("after", "f.1", { type: "step-start" }),
      streamed("after", "f.1", { type: "text", text: "after the broadcast" }),
      done("after", "f.1"),
      event("run.completed", { status: "completed" }),
    ]);
    expect(code).toBe(0);
    expect(out).toBe(
      ["▶ Fan (run run-1, segment 2)", "", "── slow (mock/demo)", "slow begins slow ends", "", "── quick (mock/demo)", "quick, all of it", "", "── after (mock/demo)", "after the broadcast", "", "✔ completed", ""].join("\n"),
    );
  });

  it("three at once, the shown one last: the finished ones are printed in the order they began", async () => {
    const { out } = await printed([
      streamed("a", "f.0", { type: "text", text: "a1 " }),
      streamed("b", "f.1", { type: "text", text: "b-all" }),
      streamed("c", "f.2", { type: "text", text: "c1 " }),
      done("b", "f.1"),
      streamed("c", "f.2", { type: "text", text: "c2" }),
      done("c", "f.2"),
      streamed("a", "f.0", { type: "text", text: "a2" }),
      done("a", "f.0"),
      streamed("d", "g", { type: "text", text: "d-all" }),
      done("d", "g"),
      event("run.completed", { status: "completed" }),
    ]);
    const order = ["a1 a2", "b-all", "c1 c2", "d-all"].map((s) => out.indexOf(s));
    expect(order.every((i) => i >= 0), out).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
  });
});
