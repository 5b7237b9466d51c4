import type { PendingRequest, RunSummary } from "../../shared/runs";
import type { Strategy } from "../../shared/strategy";
import type { EventStorage } from "../events/event-store";
import { flowGraph } from "../strategies/flow-graph";
import type { RunRow } from "./run-lifecycle";
import type { RunState } from "./run-state";

/**
 * What the runs service shows of a run: its stored row, overlaid with its live state while it
 * runs (usage and spend grow in memory; the row has them once the segment ends).
 */

/** A row of the run list. */
export function runSummary(row: RunRow, live: RunState | undefined): RunSummary {
  const running = row.status === "running" && live;
  return {
    runId: row.id,
    cwd: row.cwd,
    strategyName: row.strategyName,
    strategyPath: row.strategyPath,
    startedAt: new Date(row.startedAt).toISOString(),
    completedAt: row.completedAt ? new Date(row.completedAt).toISOString() : null,
    status: row.status,
    usage: running ? { ...live.usage } : { promptTokens: row.promptTokens, completionTokens: row.completionTokens },
    costUsd: running ? live.spent.usd : (row.costUsd ?? undefined),
  };
}

/** A run held in memory, as list_strategies reports it. */
export function inMemorySummary(run: RunState) {
  return {
    runId: run.runId,
    strategyName: run.config.strategy.name,
    status: run.status,
    startedAt: new Date(run.startedAt).toISOString(),
    ...(run.completedAt ? { completedAt: new Date(run.completedAt).toISOString() } : {}),
  };
}

/** One run: its listing row, live state and what it waits on (a stored-only run: from its run.started). */
export async function runDetail(runId: string, row: RunRow | undefined, run: RunState | undefined, store: EventStorage, storedRequests: PendingRequest[] = []) {
  const strategy = run?.config.strategy;
  const first = strategy ? undefined : (await store.readAfter(0, { kind: "run", id: runId }, 1))[0];
  const startedPayload = first?.type === "run.started" ? first.payload : undefined;
  const flow = (strategy?.flow ?? startedPayload?.flowTree ?? null) as Strategy["flow"] | null;
  // a segment ends in memory first, then its row commits with run.completed: until then it runs
  const ending = run && row && row.segment === run.segment && row.status === "running" && run.status !== "running" && run.status !== "pending";
  return {
    runId,
    status: ending ? row.status : (run?.status ?? row!.status),
    segment: run?.segment ?? row!.segment,
    cwd: run?.config.cwd ?? row!.cwd,
    strategyName: strategy?.name ?? row!.strategyName,
    strategyPath: run?.config.strategyPath ?? row!.strategyPath,
    modelOverride: run?.config.modelOverride ?? row?.modelOverride ?? null,
    startedAt: row ? new Date(row.startedAt).toISOString() : null,
    completedAt: row?.completedAt ? new Date(row.completedAt).toISOString() : null,
    input: row?.input ?? null,
    result: row?.result ?? null,
    error: row?.errorCode ? { code: row.errorCode, message: row.errorMessage ?? "" } : null,
    usage: run && run.status === "running" ? { ...run.usage } : { promptTokens: row?.promptTokens ?? 0, completionTokens: row?.completionTokens ?? 0 },
    pendingRequests: run?.pendingRequests() ?? storedRequests,
    agents: strategy ? Object.keys(strategy.agents) : (startedPayload?.agents ?? []),
    flowTree: flow,
    graph: flow ? flowGraph({ flow } as Strategy) : null,
    warnings: run?.warnings ?? [],
  };
}
