import Database from "better-sqlite3";
import { join } from "node:path";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { makeRepo } from "../testing/agents-world";
import { removeHome, tempHome } from "../testing/server-harness";
import { killYardWorker, startYardWorker, type WorkerProc } from "../testing/yard-worker";
import { startBenchServer, type BenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { sleep } from "./rounds";
import { fmt, median, type BenchRow } from "./table";
import { ensureCliBundle } from "./yard-command";

/**
 * Placement throughput (issue 19): `agents` queued agents (both workers drained), then both
 * undrained: how many the server places per second, from the undrain to the last one out of
 * `queued` (seen on a listing every 50 ms). Median of `rounds`, one server, two `yard worker`s
 * with room for all.
 *
 * A floor, without a ratio goal. Placing a queued agent is, one at a time (agents.service.ts
 * placeQueued): the decision (WorkersService.place: the workers' rows and the running counts),
 * the compare-and-set claim (AgentRecords.claimQueued), then its start: a call to the worker to
 * fetch the server's branches and make the worktree, write its input files, launch its CLI. The
 * start is most of it and cannot be left out from outside the server, so a ratio to a bare loop
 * of claims would compare different work. The bare loop is printed for scale only: the same
 * claims (`UPDATE agents SET worker, worker_epoch, config_dir, workspace_path, version+1,
 * updated_at WHERE id=? AND status='queued' AND version=?`, one transaction each, as claimQueued
 * writes them) over the same queued rows, on a copy of the server's SQLite file taken before the
 * undrain, with the server's pragmas.
 */
export async function benchPlacement(options: { agents?: number; rounds?: number; build?: boolean } = {}): Promise<BenchRow[]> {
  const n = options.agents ?? 30;
  const rounds = options.rounds ?? 3;
  if (options.build ?? true) await ensureCliBundle();
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  let server: BenchServer | undefined;
  const workers: WorkerProc[] = [];
  const ours: number[] = [];
  const bare: number[] = [];
  let placed = 0;
  let claimed = 0;
  try {
    server = await startBenchServer({ home });
    const api = createSwitchyardClient({ url: server.url });
    for (const name of ["p0", "p1"]) {
      const { token } = await api.workers.createToken.mutate({ name });
      workers.push(await startYardWorker(server.url, token, name, { capacity: n }));
    }
    for (let r = 0; r < rounds; r++) {
      for (const w of workers) await api.workers.drain.mutate({ name: w.name, drained: true });
      const ids = new Set<string>();
      for (let i = 0; i < n; i++) {
        const a = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt(`place ${r}.${i}`, [{ done: "ok" }]) });
        if (a.status !== "queued") throw new Error(`agent ${i} was not queued (${a.status}): the workers are drained`);
        ids.add(a.id);
      }
      const copy = join(home, `copy-${r}.db`);
      snapshot(join(home, "switchyard.db"), copy);
      await waitIdle(server.pid, 10_000);
      const took = await measured(async () => {
        const t0 = performance.now();
        await Promise.all(workers.map((w) => api.workers.drain.mutate({ name: w.name, drained: false })));
        for (;;) {
          const left = await queuedAmong(api, ids);
          if (left.queued === 0) return { ms: performance.now() - t0, placed: left.placed };
          if (performance.now() - t0 > 120_000) return { ms: Number.NaN, placed: left.placed };
          await sleep(50);
        }
      });
      ours.push((n / took.ms) * 1000);
      placed += took.placed;
      // the agents finish before the next round (outside the measured section)
      await finished(api, ids);
      await waitIdle(process.pid, 10_000);
      const claims = await measured(async () => bareClaims(copy));
      bare.push((claims.claimed / claims.ms) * 1000);
      claimed += claims.claimed;
    }
    return [
      {
        bench: "placement",
        metric: `queued agents placed per second, 2 workers with room (decision + claim + worktree made on the worker + CLI launched, one at a time; ${n} agents, median of ${rounds}): a floor`,
        value: `${median(ours).toFixed(1)}/s (each: ${ours.map((x) => x.toFixed(1)).join(", ")}/s; for scale, bare compare-and-set claims of the same rows on a copy of the same SQLite file: ${fmt.rate(median(bare))})`,
        goal: "-",
        count: { sent: n * rounds * 2, arrived: placed + claimed, unit: "agents placed (server) + rows claimed (bare)" },
      },
    ];
  } finally {
    for (const w of workers) {
      await killYardWorker(w);
      removeHome(w.home);
    }
    await server?.stop();
    removeHome(home);
    removeHome(repo);
  }
}

/** A consistent copy of a live SQLite file (VACUUM INTO, from a read-only connection). */
function snapshot(path: string, to: string): void {
  const db = new Database(path, { readonly: true });
  try {
    db.exec(`VACUUM INTO '${to.replace(/'/g, "''")}'`);
  } finally {
    db.close();
  }
}

async function queuedAmong(api: SwitchyardClient, ids: Set<string>): Promise<{ queued: number; placed: number }> {
  const items = (await api.agents.list.query({})).items.filter((a) => ids.has(a.id));
  return { queued: items.filter((a) => a.status === "queued").length, placed: items.filter((a) => a.status !== "queued" && a.worker !== null).length };
}

async function finished(api: SwitchyardClient, ids: Set<string>): Promise<void> {
  for (let t = 0; t < 1200; t++) {
    const items = (await api.agents.list.query({})).items.filter((a) => ids.has(a.id));
    if (items.every((a) => !["queued", "starting", "running"].includes(a.status))) return;
    await sleep(100);
  }
}

/** The bare loop: each queued row (oldest first) claimed by compare-and-set on its version, one transaction each. */
function bareClaims(path: string): { claimed: number; ms: number } {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -32000");
    const t0 = performance.now();
    const rows = db.prepare("SELECT id, version, alias FROM agents WHERE status = 'queued' ORDER BY created_at, id").all() as Array<{ id: string; version: number; alias: string }>;
    const claim = db.prepare("UPDATE agents SET worker = ?, worker_epoch = ?, config_dir = ?, workspace_path = ?, version = version + 1, updated_at = ? WHERE id = ? AND status = 'queued' AND version = ? RETURNING *");
    let claimed = 0;
    for (const [i, r] of rows.entries()) {
      const w = `p${i % 2}`;
      const got = claim.get(w, 1, `/w/${w}/agents/${r.id}/config`, `/w/${w}/worktrees/${r.alias}`, Date.now(), r.id, r.version);
      if (got) claimed++;
    }
    return { claimed, ms: performance.now() - t0 };
  } finally {
    db.close();
  }
}
