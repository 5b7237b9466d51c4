import { z } from "zod";
import { DaemonSummary, type QueuedDaemonEvent } from "../../../shared/daemons";
import { clip, defineTool, preview } from "../tool-kit";
import { ID } from "./limits";

/** Daemon agents: list them, trigger one, look inside one. */

const DAEMON_REF = ID.describe("The daemon's id or name");
const MAX_PAYLOAD_CHARS = 256 * 1024;

type DaemonIn = Omit<DaemonSummary, "inflight_event"> & { inflight_event?: { seq: number; enqueued_at: string; payload?: unknown } | null };

/** A daemon summary with its result, error and in-flight payload cut short. */
function summary(d: DaemonIn): DaemonSummary {
  const { inflight_event: inflight, ...rest } = d;
  return {
    ...rest,
    ...(d.result !== undefined ? { result: clip(d.result, 2000) } : {}),
    ...(d.error !== undefined ? { error: clip(d.error, 2000) } : {}),
    ...(inflight !== undefined ? { inflight_event: inflight && { seq: inflight.seq, enqueued_at: inflight.enqueued_at, payload: preview(inflight.payload) } } : {}),
  };
}

export const listDaemons = defineTool({
  name: "list_daemons",
  title: "List daemon agents",
  description: "Daemon agents (long-lived agents fed by a durable trigger queue), newest first: status, queue length, iterations, last result.",
  input: z.object({ limit: z.number().int().min(1).max(200).default(50) }),
  output: z.object({ total: z.number(), daemons: z.array(DaemonSummary) }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const all = await ctx.yard.daemons.list.query();
    const running = all.filter((d) => d.status === "running").length;
    return { data: { total: all.length, daemons: all.slice(0, args.limit).map(summary) }, text: `${all.length} daemons (${running} running)` };
  },
});

export const triggerDaemon = defineTool({
  name: "trigger_daemon",
  title: "Trigger a daemon",
  description: "Queue an event for a running daemon (any JSON payload, up to 256 KB); it gets it as a user message at its next idle moment. Returns once the event is durable. A full queue is DAEMON_QUEUE_FULL.",
  input: z.object({
    daemon: DAEMON_REF,
    payload: z
      .unknown()
      .refine((p) => (JSON.stringify(p ?? null)?.length ?? 0) <= MAX_PAYLOAD_CHARS, `at most ${MAX_PAYLOAD_CHARS} characters of JSON`)
      .describe('The event, any JSON value (e.g. {"kind": "file_changed", "path": "src/lib.rs"})'),
  }),
  output: z.object({ daemon: z.string(), seq: z.number().describe("The event's place in the daemon's queue") }),
  async run(args, ctx) {
    const r = await ctx.yard.daemons.trigger.mutate({ id: args.daemon, payload: args.payload ?? null });
    return { data: { daemon: args.daemon, seq: r.seq }, text: `Queued event ${r.seq} for daemon ${args.daemon}` };
  },
});

const MessageView = z.object({ role: z.string(), text: z.string() });

/** A transcript message as one line of text: its text parts, and tool calls by name. */
function messageView(m: unknown): z.infer<typeof MessageView> {
  const msg = (m ?? {}) as { role?: unknown; content?: unknown };
  const role = typeof msg.role === "string" ? msg.role : "unknown";
  if (typeof msg.content === "string") return { role, text: clip(msg.content, 2000) };
  const parts = Array.isArray(msg.content) ? (msg.content as Array<Record<string, unknown>>) : [];
  const text = parts
    .map((p) => {
      if (typeof p.text === "string") return p.text;
      if (p.type === "tool-call") return `[tool call ${String(p.toolName)}]`;
      if (p.type === "tool-result") return `[tool result ${String(p.toolName)}]`;
      return `[${String(p.type)}]`;
    })
    .join("\n");
  return { role, text: clip(text, 2000) };
}

export const daemonSnapshot = defineTool({
  name: "daemon_snapshot",
  title: "Look inside a daemon",
  description: "A daemon's state: its summary, the last messages of its transcript (each cut to 2,000 characters) and the head of its queue.",
  input: z.object({
    daemon: DAEMON_REF,
    lastMessages: z.number().int().min(0).max(50).default(10).describe("Transcript messages to show, newest last"),
    pendingEvents: z.number().int().min(0).max(50).default(10).describe("Queued events to show, oldest first"),
  }),
  output: z.object({
    daemon: DaemonSummary,
    transcriptSummary: z.string().nullable(),
    totalMessages: z.number(),
    messages: z.array(MessageView),
    pendingEvents: z.array(z.object({ seq: z.number(), enqueued_at: z.string(), payload: z.unknown() })),
  }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const s = await ctx.yard.daemons.snapshot.query({ id: args.daemon });
    const { visible_messages, recorded_messages: _recorded, transcript_summary, pending_events, watch_state: _watch, ...rest } = s;
    const messages = args.lastMessages > 0 ? visible_messages.slice(-args.lastMessages).map(messageView) : [];
    const pending = (pending_events as QueuedDaemonEvent[]).slice(0, args.pendingEvents).map((e) => ({ ...e, payload: preview(e.payload) }));
    const daemon = summary(DaemonSummary.parse(rest));
    return {
      data: { daemon, transcriptSummary: transcript_summary === null ? null : clip(transcript_summary, 4000), totalMessages: visible_messages.length, messages, pendingEvents: pending },
      text: `Daemon ${daemon.name} (${daemon.id}) is ${daemon.status}, ${daemon.pending_event_count} events queued, ${daemon.total_iterations} iterations`,
    };
  },
});

export const DAEMON_TOOLS = [listDaemons, triggerDaemon, daemonSnapshot];
