import { z } from "zod";
import { AccountEvents } from "./account";
import { AgentEvents } from "./agent";
import { ConversationEvents } from "./conversation";
import { DaemonEvents } from "./daemon";
import { RunEvents } from "./run";
import { SystemEvents } from "./system";
import { WorkerEvents } from "./worker";

/**
 * The one catalogue of bus events. Names are dotted `<domain>.<past-tense>`; each maps to the zod
 * schema of its payload. A domain adds its events by adding its map here.
 */
export const EventCatalog = {
  ...SystemEvents,
  ...RunEvents,
  ...DaemonEvents,
  ...AgentEvents,
  ...ConversationEvents,
  ...AccountEvents,
  ...WorkerEvents,
} as const;

export type EventCatalog = typeof EventCatalog;
export type EventType = keyof EventCatalog;
export type EventPayload<T extends EventType> = z.infer<EventCatalog[T]>;

/**
 * Names events had before they were put in the past tense (issue 22), old -> new. Stored events
 * keep their old name; the event stores give every reader the new one (`currentEventType`), and
 * a subscription's type filter takes either.
 */
export const RenamedEvents = {
  "agent.output": "agent.output_produced",
  "agent.waiting": "agent.questions_asked",
  "agent.idle": "agent.went_idle",
  "run.spend": "run.spend_updated",
  "run.cli_agent": "run.cli_agent_started",
  "run.warning": "run.warned",
  "run.agent_output": "run.agent_responded",
  "server.stopping": "server.shutdown_started",
  "account.available": "account.became_available",
  "account.invalid": "account.invalidated",
} as const satisfies Record<string, EventType>;

/** A stored event's type as it is named today (an old name mapped to its new one). */
export function currentEventType(type: string): string {
  return Object.hasOwn(RenamedEvents, type) ? RenamedEvents[type as keyof typeof RenamedEvents] : type;
}

const filterNames = [...Object.keys(EventCatalog), ...Object.keys(RenamedEvents)] as [string, ...string[]];

/** An event type in a subscription's filter: today's name or an old one (as today's name). */
export const EventTypeFilter = z
  .enum(filterNames, { error: (issue) => `expected an event type (e.g. run.completed, agent.went_idle), got ${JSON.stringify(issue.input)}` })
  .transform((type) => currentEventType(type) as EventType);

/** Which run, agent, daemon or conversation an event belongs to; a subscriber may ask for one. */
export const EventScope = z
  .object({
    runId: z.string().min(1),
    agentId: z.string().min(1),
    daemonId: z.string().min(1),
    conversationId: z.string().min(1),
  })
  .partial()
  .strict();
export type EventScope = z.infer<typeof EventScope>;

export const ScopeKind = z.enum(["run", "agent", "daemon", "conversation"]);
export type ScopeKind = z.infer<typeof ScopeKind>;

/** A subscriber's filter: one scope kind and id. */
export const ScopeFilter = z.object({ kind: ScopeKind, id: z.string().min(1) }).strict();
export type ScopeFilter = z.infer<typeof ScopeFilter>;

export const scopeKey = {
  run: "runId",
  agent: "agentId",
  daemon: "daemonId",
  conversation: "conversationId",
} as const satisfies Record<ScopeKind, keyof EventScope>;

/** A stored event as every subscriber sees it. `id` is global and monotonic. */
export type BusEvent<T extends EventType = EventType> = Extract<AnyBusEvent, { type: T }>;

type AnyBusEvent = {
  [K in EventType]: {
    id: number;
    /** ISO-8601 time of publication. */
    ts: string;
    type: K;
    scope: EventScope;
    payload: EventPayload<K>;
  };
}[EventType];
