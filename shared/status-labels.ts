import type { AgentStatus } from "./statuses";
import type { WorkerState } from "./workers";

/**
 * How people are shown a status: the dashboard's badges and the `yard` CLI's text alike. No zod
 * here (types only), so the CLI's entry loads it without the schemas.
 */

/** An agent's status in words (the stored value stays in `--json` and the API). */
export const AGENT_STATUS_LABELS: Record<AgentStatus, string> = {
  starting: "Starting",
  queued: "Queued",
  running: "Running",
  waiting_for_input: "Needs you",
  waiting_for_account: "Waiting for an account",
  idle: "Done",
  stopped: "Stopped",
  crashed: "Crashed",
  interrupted: "Interrupted",
};

/**
 * An agent's status as people see it: "Needs you" whenever it waits on a human (`needsYou`:
 * answers, or a tool approval while it runs), whatever its stored status.
 */
export function agentStatusLabel(a: { status: AgentStatus; needsYou?: boolean }): string {
  return a.needsYou ? AGENT_STATUS_LABELS.waiting_for_input : AGENT_STATUS_LABELS[a.status];
}

/** A worker's state in words (`yard worker` processes on other machines). */
export const WORKER_STATE_LABELS: Record<WorkerState, string> = {
  new: "Never connected",
  connected: "Connected",
  disconnected: "Disconnected",
  lost: "Lost",
  revoked: "Revoked",
};
