import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";

/** Logs outlive a deleted agent and are still read with the parser of the CLI that wrote them. */

const THREAD = "01a20375-0000-7000-8000-00000000c0de";
// codex exec --json lines (the shapes of __recorded__/codex-*.jsonl), played by a stand-in script
const CODEX_LINES = [
  { type: "thread.started", thread_id: THREAD },
  { type: "turn.started" },
  { type: "item.completed", item: { id: "item_0", type: "agent_message", text: "Hello from the codex stand-in" } },
  { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5 } },
];

let w: AgentsWorld;
let bin: string;
beforeAll(async () => {
  bin = mkdtempSync(join(tmpdir(), "switchyard-bin-"));
  const script = join(bin, "codex");
  const echo = CODEX_LINES.slice(0, 3).map((l) => `echo '${JSON.stringify(l)}'`);
  writeFileSync(
    script,
    `#!/bin/sh\n${echo.join("\n")}\nmkdir -p .switchyard/output\nprintf '{"status":"done","result":{"message":"codex stand-in done"}}' > .switchyard/output/signal.json\necho '${JSON.stringify(CODEX_LINES[3])}'\n`,
  );
  chmodSync(script, 0o755);
  w = await startAgentsWorld({ env: { SWITCHYARD_AGENT_COMMANDS: `codex=${script}` } });
});
afterAll(async () => {
  await w?.stop();
  rmSync(bin, { recursive: true, force: true });
});

describe("a deleted agent's log", () => {
  it("is parsed by its own provider's parser (a codex log as codex's, not Claude's)", async () => {
    const agent = await w.t.client.agents.spawn.mutate({ provider: "codex", repo: w.repo, prompt: "Say hello" });
    const done = await waitForAgent(w.t.client, agent.id);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const before = await w.t.client.agents.output.query({ agentId: agent.id, limit: 100 });
    const output = (await w.t.client.events.list.query({ scope: { kind: "agent", id: agent.id }, limit: 500 })).events.find((e) => e.type === "agent.output_produced") as
      | Extract<BusEvent, { type: "agent.output_produced" }>
      | undefined;
    expect(output).toBeDefined();

    await w.t.client.agents.delete.mutate({ agentId: agent.id, force: true });
    await expect(w.t.client.agents.get.query({ agentId: agent.id })).rejects.toThrow();

    const after = await w.t.client.agents.output.query({ agentId: agent.id, limit: 100 });
    expect(after.lines).toEqual(before.lines);
    const events = after.lines.flatMap((l) => l.events);
    expect(events).toContainEqual({ kind: "session", sessionId: THREAD });
    expect(events).toContainEqual({ kind: "text", text: "Hello from the codex stand-in" });
    expect(events.filter((e) => e.kind === "raw")).toEqual([]);
    // an agent.output_produced event of the deleted agent still resolves to codex-parsed lines
    const chunk = await w.t.server.services.agents.chunkOutput(agent.id, output!.payload.chunkId);
    expect(chunk.flatMap((l) => l.events)).toContainEqual({ kind: "session", sessionId: THREAD });
  });
});
