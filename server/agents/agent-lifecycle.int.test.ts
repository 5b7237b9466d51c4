import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, openDb } from "../db/client";
import { EventBus } from "../events/bus";
import { EventStore } from "../events/event-store";
import { REPO_ROOT } from "../paths";
import { AgentLifecycle } from "./agent-lifecycle";
import { AgentRecords } from "./agent-records";

/** Two processes on one SQLite store move the same agent at the same moment: exactly one wins. */

const dir = mkdtempSync(join(tmpdir(), "switchyard-lifecycle-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const migrationsDir = resolve(REPO_ROOT, "drizzle");

describe("the agent lifecycle across processes", () => {
  it("20 rounds of two processes moving one agent from the same version: one wins, the other gets a clear error; one event each", async () => {
    const dbPath = join(dir, "switchyard.db");
    const db = openDb({ path: dbPath, migrationsDir });
    const records = new AgentRecords(db);
    const bus = new EventBus(new EventStore(db));
    const lifecycle = new AgentLifecycle(records, bus);
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server", "testing", "lifecycle-child.ts"), dbPath, migrationsDir], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] });
    const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await answers.next()).value as string) ?? "null") as { ok?: boolean; status?: string; code?: string; ready?: boolean };
    try {
      expect(await next()).toEqual({ ready: true });
      const outcomes: string[] = [];
      for (let round = 0; round < 20; round++) {
        const id = `agent_round${round}`;
        const now = Date.now();
        records.insert({ id, alias: `round-${round}`, provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/nowhere", workspaceKind: "worktree", configDir: "/nowhere", createdAt: now, updatedAt: now });
        db.$client.prepare("UPDATE agents SET status = 'running' WHERE id = ?").run(id);
        const go = join(dir, `go-${round}`);
        child.stdin!.write(`${JSON.stringify({ agentId: id, move: "finished", expectedVersion: 0, go })}\n`);
        await new Promise((r) => setTimeout(r, 30));
        writeFileSync(go, "");
        const [mine, theirs] = await Promise.all([
          lifecycle.transition(id, "stopped", { expectedVersion: 0, event: { type: "agent.stopped", payload: { reason: "from the test process" } } }).then(
            (row) => ({ ok: true, status: row.status, code: undefined as string | undefined }),
            (err: { code?: string }) => ({ ok: false, status: undefined as string | undefined, code: err.code }),
          ),
          next(),
        ]);
        expect([mine.ok, theirs.ok].filter(Boolean)).toHaveLength(1);
        const loser = mine.ok ? theirs : mine;
        expect(["AGENT_VERSION_CONFLICT", "AGENT_TRANSITION_INVALID"]).toContain(loser.code);
        const row = records.get(id);
        expect(row.version).toBe(1);
        expect(row.status).toBe(mine.ok ? "stopped" : "idle");
        expect(bus.store.readAfter(0, { kind: "agent", id }, 10)).toHaveLength(1);
        outcomes.push(mine.ok ? "test process" : "second process");
      }
      // both processes' events are in the store, with distinct ids
      const all = bus.store.readAfter(0, undefined, 1000);
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      expect(all).toHaveLength(20);
      console.log(`winners: ${outcomes.filter((o) => o === "test process").length} test process, ${outcomes.filter((o) => o === "second process").length} second process`);
    } finally {
      child.kill();
      closeDb(db);
    }
  });
});
