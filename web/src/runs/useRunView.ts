import { useState } from "react";
import { useTrackedSubscription, type TrackedStream } from "../live/useTrackedSubscription";
import { trpc } from "../trpc";
import { applyEvents, emptyRunView, type RunView } from "./run-model";

export type RunViewState = TrackedStream & { view: RunView };

/**
 * One run's events from the start (`runs.onEvents`: the stored timeline, then live), folded into
 * a RunView in batches (a replay page, a burst of deltas: one render). useTrackedSubscription
 * resumes after the last tracked id and drops repeats, and the fold drops any event id it has
 * already applied, so a reload or a reconnect mid-run shows everything once.
 */
export function useRunView(runId: string): RunViewState {
  const [view, setView] = useState<RunView>(emptyRunView);
  const stream = useTrackedSubscription(trpc.runs.onEvents, { runId }, (batches) => setView((v) => applyEvents(v, batches.flat())), { flushMs: 50 });
  return { ...stream, view };
}
