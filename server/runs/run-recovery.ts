import { isAbsolute, resolve } from "node:path";
import type { BusEvent } from "../../shared/events";
import type { EventStorage } from "../events/event-store";
import type { Logger } from "../log";
import { loadStrategyFile } from "../strategies/loader";
import type { RunLifecycle, RunRow } from "./run-lifecycle";
import type { RunConfig, RunState } from "./run-state";
import { agentRecords, lastSegment, readRunEvents, type SegmentState } from "./timeline";

/** What recovery needs from the runs service. */
export type RecoveryHost = {
  lifecycle: RunLifecycle;
  store: EventStorage;
  log: Logger;
  /** A RunState for this config (the service's bus and permission policy). */
  createRun(config: RunConfig): RunState;
  /** Hold the run in memory and execute its segment in the background. */
  adopt(run: RunState, input: string): void;
  /** Take ownership of a run left running (its lease: free, expired or this server's); false when another server owns it. */
  claim(row: RunRow): Promise<boolean>;
};

const INTERRUPTED = { code: "INTERRUPTED", message: "The server stopped while this run was running; it can be continued (continue_run)" };

/**
 * On server start, and on a shared database whenever a server's leases expire: a run whose segment was waiting on a human (or on a detached CLI agent)
 * resumes waiting, its completed steps not run again; any other interrupted segment ends with
 * error INTERRUPTED and stays continuable. No run is left "running".
 */
export async function recoverRuns(host: RecoveryHost): Promise<{ resumed: string[]; interrupted: string[] }> {
  const resumed: string[] = [];
  const interrupted: string[] = [];
  for (const row of await host.lifecycle.running()) {
    if (!(await host.claim(row))) continue;
    const events = await readRunEvents(host.store, row.id);
    const seg = lastSegment(events);
    if (seg.completed && seg.completed.payload.segment === row.segment) {
      await host.lifecycle.reconcile(row, seg.completed);
      continue;
    }
    // waiting for a human, or in a CLI step whose agent runs on detached: the run goes on
    const cliStepOpen = [...seg.memo.cliAgents.keys()].some((stepKey) => !seg.memo.steps.has(stepKey));
    if (seg.started && (seg.memo.openRequests.size > 0 || cliStepOpen) && (await resumeWaiting(host, row, seg, events))) {
      resumed.push(row.id);
      continue;
    }
    await host.lifecycle.interrupt(row, INTERRUPTED, seg.started?.payload.requestId);
    interrupted.push(row.id);
  }
  return { resumed, interrupted };
}

/** Rebuild the waiting segment in memory from its timeline and run it on; false if it cannot be. */
async function resumeWaiting(host: RecoveryHost, row: RunRow, seg: SegmentState, events: BusEvent[]): Promise<boolean> {
  const started = seg.started!.payload;
  let loaded;
  try {
    loaded = await loadStrategyFile(isAbsolute(started.strategyPath) ? started.strategyPath : resolve(started.cwd, started.strategyPath), { cwd: started.cwd });
  } catch (err) {
    host.log.warn({ runId: row.id, err: String(err) }, "cannot reload the strategy of a waiting run");
    return false;
  }
  const run = host.createRun({ runId: row.id, strategy: loaded.strategy, strategyPath: loaded.path, cwd: started.cwd, manifestPath: started.manifestPath, modelOverride: started.modelOverride });
  const at = { segment: row.segment, requestId: started.requestId, memo: seg.memo, usage: seg.usage, startedAt: row.startedAt, records: agentRecords(events) };
  await host.lifecycle.transition(run, { event: "resume", at });
  host.adopt(run, started.initialInput ?? "");
  return true;
}
