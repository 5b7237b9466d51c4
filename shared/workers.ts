import { z } from "zod";

/**
 * Workers: `yard worker` processes on other machines that run agents' CLIs for the servers. The
 * wire contract of the worker protocol (one WebSocket per worker, at `/worker`, with the worker's
 * own token) and the workers.* API. docs/SCALING.md "Agents on other machines" tells the story.
 */

export const WORKER_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
export const WorkerName = z.string().regex(WORKER_NAME, "a worker name: lowercase letters, digits, dots, dashes, underscores (up to 63)");

/** A provider's CLI as the worker found it on its PATH. */
export const WorkerProvider = z.object({
  name: z.string(),
  command: z.string(),
  /** What `<cli> --version` printed (first line), null when it did not answer. */
  version: z.string().nullable(),
});
export type WorkerProvider = z.infer<typeof WorkerProvider>;

/** What a worker says about itself when it connects (its `hello`). */
export const WorkerCapabilities = z.object({
  version: z.string(),
  hostname: z.string(),
  /** Its data dir on its own disk: agents' folders and worktrees live under it. */
  home: z.string(),
  capacity: z.number().int().min(1).max(1000),
  labels: z.array(z.string().min(1).max(64)).max(32),
  providers: z.array(WorkerProvider),
  /** Free bytes on the disk of its home, null when unknown. */
  diskFree: z.number().int().nonnegative().nullable(),
  /** The server's URL as this worker reaches it: what its agents get as SWITCHYARD_URL. */
  serverUrl: z.string().url(),
});
export type WorkerCapabilities = z.infer<typeof WorkerCapabilities>;

export const WorkerState = z.enum([
  /** A token exists; the worker never connected. */
  "new",
  "connected",
  /** Gone for less than the lost delay: its agents keep their status for now. */
  "disconnected",
  /** No contact for the lost delay: its running agents were interrupted. */
  "lost",
  "revoked",
]);
export type WorkerState = z.infer<typeof WorkerState>;

/** A worker as the API returns it. */
export const WorkerInfo = z.object({
  name: z.string(),
  state: WorkerState,
  drained: z.boolean(),
  capabilities: WorkerCapabilities.nullable(),
  /** Agents placed on it that are starting or running now. */
  runningAgents: z.number().int().nonnegative(),
  /** The server it is connected to (its URL), when connected. */
  server: z.string().nullable(),
  connectedAt: z.string().nullable(),
  heartbeatAt: z.string().nullable(),
  lostAt: z.string().nullable(),
  createdAt: z.string(),
});
export type WorkerInfo = z.infer<typeof WorkerInfo>;

export const CreateWorkerTokenInput = z.object({ name: WorkerName }).strict();
export const WorkerNameInput = z.object({ name: z.string().min(1) }).strict();
export const DrainWorkerInput = z.object({ name: z.string().min(1), drained: z.boolean().default(true) }).strict();

// ---- the protocol: JSON text frames on the worker's WebSocket ----

/** The error of a failed call, as it crosses the wire (the same DomainError comes out on the server). */
export const WireError = z.object({
  name: z.string(),
  message: z.string(),
  code: z.string().optional(),
  kind: z.string().optional(),
  details: z.unknown().optional(),
});

/** Worker -> server. */
export const WorkerMessage = z.discriminatedUnion("type", [
  /** The first frame: who it is, and the sessions it still runs (re-attached only where its epoch still holds). */
  z.object({ type: z.literal("hello"), capabilities: WorkerCapabilities, running: z.array(z.object({ agentId: z.string(), session: z.number().int(), epoch: z.number().int() })) }),
  /** The answer to a call: `ok` with its value (absent for none), or its error. */
  z.object({ type: z.literal("result"), id: z.number().int(), ok: z.boolean(), value: z.unknown().optional(), error: WireError.optional() }),
  /** A session's output file grew: the server reads it now rather than at its next poll. */
  z.object({ type: z.literal("output"), agentId: z.string(), session: z.number().int() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;

/** Server -> worker. */
export const ServerMessage = z.discriminatedUnion("type", [
  /** The answer to `hello`: this connection's epoch; sessions it runs whose agents are no longer its own are to be stopped. */
  z.object({ type: z.literal("welcome"), epoch: z.number().int(), heartbeatMs: z.number().int(), lostAfterMs: z.number().int(), stop: z.array(z.object({ agentId: z.string(), session: z.number().int() })) }),
  /** A call of the session seam (server/agents/agent-host.ts), by name, with its JSON arguments. */
  z.object({ type: z.literal("call"), id: z.number().int(), call: z.string(), args: z.array(z.unknown()), epoch: z.number().int() }),
]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/** WebSocket close codes of the protocol (4000-4999: the application's own). */
export const WORKER_CLOSE = {
  /** Another connection of the same worker name took over. */
  replaced: 4001,
  revoked: 4003,
  badHello: 4400,
  /** Drained and idle, or the server is stopping: reconnect later. */
  goingAway: 1001,
} as const;
