import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { AgentLifecycle, type AgentMove } from "../agents/agent-lifecycle";
import { AgentRecords } from "../agents/agent-records";
import { openDb } from "../db/client";
import { EventBus } from "../events/bus";
import { EventStore } from "../events/event-store";

/**
 * A second process on the same SQLite store (test support for the lifecycle's compare-and-set):
 * `tsx lifecycle-child.ts <db> <migrations>`, then one JSON line per move on stdin
 * `{agentId, move, expectedVersion, go}`: waits until the file `go` exists, moves the agent,
 * answers `{ok, status?, code?}` on stdout.
 */
const [dbPath, migrationsDir] = process.argv.slice(2) as [string, string];
const db = openDb({ path: dbPath, migrationsDir });
const records = new AgentRecords(db);
const lifecycle = new AgentLifecycle(records, new EventBus(new EventStore(db)));

const rl = createInterface({ input: process.stdin });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of rl) {
  const req = JSON.parse(line) as { agentId: string; move: AgentMove; expectedVersion: number; go: string };
  while (!existsSync(req.go)) await new Promise((r) => setImmediate(r));
  try {
    const row = await lifecycle.transition(req.agentId, req.move, { expectedVersion: req.expectedVersion, event: { type: "agent.status_changed", payload: { status: "idle", reason: "from the second process" } } });
    process.stdout.write(`${JSON.stringify({ ok: true, status: row.status })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ ok: false, code: (err as { code?: string }).code ?? String(err) })}\n`);
  }
}
