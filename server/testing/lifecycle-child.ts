import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { AgentLifecycle, type AgentMove } from "../agents/agent-lifecycle";
import { AgentMessages } from "../agents/agent-messages";
import { AgentRecords } from "../agents/agent-records";
import { openPgStore } from "../db/pg/pg-store";
import { openSqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";

/**
 * A second process on the same store (test support for the lifecycle's compare-and-set):
 * `tsx lifecycle-child.ts <SQLite file | postgres:// URL> <migrations>`, then one JSON line per
 * request on stdin, each waiting until the file `go` exists, answering `{ok, status?, code?}` on stdout:
 *   `{agentId, move, expectedVersion, go}`          moves the agent
 *   `{agentId, move: "finished", guarded: true, go}` moves it to idle only if no follow-up waits
 *   `{agentId, message, go}`                         queues a follow-up (with its event) if the agent is live
 */
const [where, migrationsDir] = process.argv.slice(2) as [string, string];
const store: Store = /^postgres(ql)?:\/\//.test(where) ? await openPgStore({ url: where, max: 4 }) : openSqliteStore({ path: where, migrationsDir });
const bus = await new EventBus(store.events).open();
const records = new AgentRecords(store);
const messages = new AgentMessages(store);
const lifecycle = new AgentLifecycle(records, bus);

type Request = { agentId: string; go: string; move?: AgentMove; expectedVersion?: number; guarded?: boolean; message?: string };

async function handle(req: Request): Promise<{ status?: string }> {
  if (req.message !== undefined) {
    const text = req.message;
    await bus.publish("agent.message_queued", { messageId: "m", text, queued: 1 }, { agentId: req.agentId }, { write: async (tx) => void (await messages.enqueueIfLive(tx, req.agentId, text)) });
    return {};
  }
  const row = await lifecycle.transition(req.agentId, req.move!, {
    ...(req.expectedVersion !== undefined ? { expectedVersion: req.expectedVersion } : {}),
    event: { type: "agent.status_changed", payload: { status: "idle", reason: "from the second process" } },
    ...(req.guarded ? { guard: (tx) => messages.assertNoneWaiting(tx, req.agentId) } : {}),
  });
  return { status: row.status };
}

const rl = createInterface({ input: process.stdin });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of rl) {
  const req = JSON.parse(line) as Request;
  while (!existsSync(req.go)) await new Promise((r) => setImmediate(r));
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await handle(req)) })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ ok: false, code: (err as { code?: string }).code ?? String(err) })}\n`);
  }
}
bus.close();
await store.close();
