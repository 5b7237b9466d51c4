import type { AgentStatus } from "../../shared/statuses";
import type { EventPayload, EventType } from "../../shared/events";
import { DomainError } from "../errors";
import type { TxDb } from "../db/store";
import type { EventBus } from "../events/bus";
import type { AgentPatch, AgentRecords, AgentRow } from "./agent-records";

/**
 * The one door for an agent's status (STYLE.md 6). Every move is `transition(id, move, ...)`: the
 * table below says from which statuses a move is allowed and where it leads; the row (status,
 * version + 1, whatever else the move writes) is a compare-and-set on the version the caller
 * read (a conditional UPDATE ... RETURNING), written in the same transaction as the move's bus
 * event, on SQLite as on PostgreSQL. An illegal move is refused with AGENT_TRANSITION_INVALID, a
 * stale version with AGENT_VERSION_CONFLICT: two processes (or servers) sharing the store cannot
 * both move one agent.
 */

export type AgentMove = "queued" | "launched" | "account_awaited" | "finished" | "asked" | "crashed" | "stopped" | "interrupted";

const ANY_RESTING: AgentStatus[] = ["waiting_for_input", "waiting_for_account", "idle", "stopped", "crashed", "interrupted"];

/** move -> the statuses it may start from, and the status it leads to. */
export const AGENT_MOVES: Record<AgentMove, { from: readonly AgentStatus[]; to: AgentStatus }> = {
  /** Accepted, waiting for a place to run (a worker with room). */
  // a spawn no worker can take yet, or the resume of an agent whose worker was lost
  queued: { from: ["starting", "interrupted"], to: "queued" },
  /** A process run started: the first, a resume (answers, a follow-up, a retry), or the next on another account. */
  launched: { from: ["starting", "queued", "running", ...ANY_RESTING], to: "running" },
  /** No usable account for the run about to start: it waits with that run. */
  account_awaited: { from: ["starting", "queued", "running", ...ANY_RESTING], to: "waiting_for_account" },
  /** The run ended with its work done (signal.json done, or a result): only with no follow-up undelivered. */
  finished: { from: ["running"], to: "idle" },
  /** The run ended with questions for a human. */
  asked: { from: ["running"], to: "waiting_for_input" },
  crashed: { from: ["starting", "queued", "running", "waiting_for_account"], to: "crashed" },
  stopped: { from: ["starting", "queued", "running", "waiting_for_input", "waiting_for_account", "idle", "interrupted"], to: "stopped" },
  /** Its host was lost while it ran: the work is kept, it can be resumed. */
  interrupted: { from: ["starting", "queued", "running"], to: "interrupted" },
};

export const AGENT_STATUSES_IN_TABLE: readonly AgentStatus[] = ["starting", "queued", "running", "waiting_for_input", "waiting_for_account", "idle", "stopped", "crashed", "interrupted"];

/** Where `move` leads from `from`, or null when the table does not allow it. */
export function nextStatus(from: AgentStatus, move: AgentMove): AgentStatus | null {
  const m = AGENT_MOVES[move];
  return m.from.includes(from) ? m.to : null;
}

export function invalidTransition(row: Pick<AgentRow, "alias" | "status">, move: AgentMove): DomainError<"AGENT_TRANSITION_INVALID"> {
  return new DomainError("AGENT_TRANSITION_INVALID", `Agent ${row.alias} is ${row.status}: it cannot be ${move} (allowed from ${AGENT_MOVES[move].from.join(", ")})`, {
    kind: "CONFLICT",
    details: { status: row.status, move },
  });
}

export function versionConflict(row: Pick<AgentRow, "alias">, expected: number): DomainError<"AGENT_VERSION_CONFLICT"> {
  return new DomainError("AGENT_VERSION_CONFLICT", `Agent ${row.alias} changed meanwhile (expected version ${expected}): read it again and retry`, { kind: "CONFLICT", details: { expectedVersion: expected } });
}

/** What a transition writes besides the status, and the event that announces it. */
export interface TransitionSpec<T extends EventType> {
  /** The version the caller read (default: the row's current one, read now). */
  expectedVersion?: number;
  /** Other columns written with the status (never status or version). */
  patch?: AgentPatch;
  event: { type: T; payload: EventPayload<T> };
  /**
   * Runs inside the transaction, after the compare-and-set (which on PostgreSQL holds the agent's
   * row until the transaction ends, so nothing moves the agent or queues to it meanwhile): throw
   * to refuse, and nothing is written (the row write is rolled back with it). Reads through `tx`.
   */
  guard?: (tx: TxDb) => Promise<void>;
  /** Runs inside the transaction after the guard (e.g. mark follow-ups delivered), writing through `tx`. */
  also?: (tx: TxDb) => Promise<void>;
}

export class AgentLifecycle {
  constructor(
    private readonly records: AgentRecords,
    private readonly bus: EventBus,
  ) {}

  /**
   * Move an agent: refused at once when the table forbids the move from the status it has now;
   * otherwise the row and the event commit together, or neither does (the promise rejects with
   * the guard's error or AGENT_VERSION_CONFLICT). Resolves with the row as written.
   */
  async transition<T extends EventType>(id: string, move: AgentMove, spec: TransitionSpec<T>): Promise<AgentRow> {
    const row = await this.records.get(id);
    const expected = spec.expectedVersion ?? row.version;
    if (row.version !== expected) throw versionConflict(row, expected);
    const to = nextStatus(row.status, move);
    if (!to) throw invalidTransition(row, move);
    let written: AgentRow | null = null;
    await this.bus.publish(spec.event.type, spec.event.payload, { agentId: row.id }, {
      write: async (tx) => {
        // every status change bumps the version: an unchanged version means an unchanged status
        written = await this.records.compareAndSet(tx, row.id, expected, to, spec.patch ?? {});
        if (!written) throw versionConflict(row, expected);
        await spec.guard?.(tx);
        await spec.also?.(tx);
      },
    });
    return written!;
  }
}
