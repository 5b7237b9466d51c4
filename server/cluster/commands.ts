import { randomUUID } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { first, type Store } from "../db/store";
import { DomainError, type ErrorCode } from "../errors";
import type { Logger } from "../log";

/** What a server can be asked to do for a run or daemon it owns. */
export type CommandOp = "run.start" | "run.continue" | "run.stop" | "run.steer" | "run.respond" | "run.policy" | "daemon.trigger" | "daemon.stop" | "daemon.snapshot" | "agent.stop" | "agent.answer" | "agent.message" | "agent.cleanup" | "agent.changes" | "agent.diff" | "agent.summary";

export type CommandCode = "OWNER_UNREACHABLE" | "COMMAND_UNKNOWN";

type Handler = (payload: unknown) => Promise<unknown>;
type Failure = { code: ErrorCode; message: string; kind: TRPC_ERROR_CODE_KEY; details?: unknown };

/** How a command's row and its result reach the other side quickly (PostgreSQL: LISTEN/NOTIFY). */
export type CommandSignals = {
  /** Tell `serverId` it has a command. */
  notifyServer(serverId: string): Promise<void>;
  /** Tell the sender its command `id` is answered. */
  notifyResult(id: string): Promise<void>;
  /** Call `onCommand` when this server is told it has commands, `onResult(id)` on answers. */
  listen(serverId: string, onCommand: () => void, onResult: (id: string) => void): Promise<() => Promise<void>>;
};

/** How long a sender waits for the owner before it gives up on that owner. */
export const COMMAND_TIMEOUT_MS = 15_000;
/** A command the owner claimed may take this much longer (a stop waits for its run to end). */
const RUNNING_GRACE_MS = 30_000;
/** Without a signal (SQLite, or a lost notification), pending rows are looked at this often. */
const POLL_MS = 250;

/**
 * Commands between the servers of one database (server_commands rows): a server that does not own
 * a run or daemon sends the owner a row and a signal, the owner claims its rows (a conditional
 * UPDATE: only it reads rows addressed to it), runs the handler registered for the op, writes the
 * result or the error as data, and signals back; the sender answers its caller with it, a
 * DomainError with the owner's code when it failed. Each command runs once.
 */
export class CommandBus {
  private readonly handlers = new Map<string, Handler>();
  private readonly waiters = new Map<string, () => void>();
  private unlisten: (() => Promise<void>) | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly serverId: string,
    private readonly log: Logger,
    private readonly signals?: CommandSignals,
  ) {}

  handle(op: CommandOp, fn: Handler): void {
    this.handlers.set(op, fn);
  }

  async start(): Promise<void> {
    if (this.signals) {
      this.unlisten = await this.signals.listen(
        this.serverId,
        () => this.drain(),
        (id) => this.waiters.get(id)?.(),
      );
    }
    this.drain();
  }

  /** Send `op` to `serverId` and wait for its answer (OWNER_UNREACHABLE after `timeoutMs`). */
  async send<T = unknown>(serverId: string, op: CommandOp, payload: unknown, timeoutMs = COMMAND_TIMEOUT_MS): Promise<T> {
    const { serverCommands } = this.store.t;
    const id = randomUUID();
    await this.store.tx((tx) =>
      tx.insert(serverCommands).values({ id, serverId, fromServerId: this.serverId, op, payload: JSON.stringify(payload ?? null), status: "pending", createdAt: Date.now() }),
    );
    await this.signals?.notifyServer(serverId).catch(() => {});
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await first(this.store.read.select().from(serverCommands).where(eq(serverCommands.id, id)));
      if (row?.status === "done" || row?.status === "failed") {
        await this.store.tx((tx) => tx.delete(serverCommands).where(eq(serverCommands.id, id)));
        const result = row.result === null ? undefined : JSON.parse(row.result);
        if (row.status === "done") return result as T;
        const f = result as Failure;
        throw new DomainError(f.code, f.message, { kind: f.kind, details: f.details });
      }
      if (Date.now() >= deadline) {
        // never run later by an owner that comes back: a pending row is withdrawn
        const withdrawn = await this.store.tx((tx) =>
          tx.delete(serverCommands).where(and(eq(serverCommands.id, id), eq(serverCommands.status, "pending"))).returning({ id: serverCommands.id }),
        );
        if (withdrawn.length > 0 || !row || Date.now() >= deadline + RUNNING_GRACE_MS) {
          throw new DomainError<CommandCode>("OWNER_UNREACHABLE", `The server that owns this (${serverId}) did not answer ${op} within ${Math.round(timeoutMs / 1000)} s; it may have stopped: try again once another server has taken over (at most 10 s)`, {
            kind: "TIMEOUT",
            details: { serverId, op },
          });
        }
        // it is running there: wait for its answer (a while: a stop waits for the run to end)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, POLL_MS);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.set(id, done);
      });
      this.waiters.delete(id);
    }
  }

  /** Claim and run what was sent to this server (one drain at a time; a signal during one runs another after it). */
  drain(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drainOnce()
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, "server commands not processed"))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.drain();
        }
      });
  }

  private async drainOnce(): Promise<void> {
    const { serverCommands } = this.store.t;
    const claimed = await this.store.tx((tx) =>
      tx.update(serverCommands).set({ status: "running" }).where(and(eq(serverCommands.serverId, this.serverId), eq(serverCommands.status, "pending"))).returning(),
    );
    await Promise.all(claimed.map((row) => this.execute(row)));
  }

  private async execute(row: { id: string; op: string; payload: string; fromServerId: string }): Promise<void> {
    const { serverCommands } = this.store.t;
    let status: "done" | "failed" = "done";
    let result: unknown;
    const handler = this.handlers.get(row.op);
    try {
      if (!handler) throw new DomainError<CommandCode>("COMMAND_UNKNOWN", `This server does not know the command ${row.op} (a different Switchyard version?)`, { kind: "NOT_IMPLEMENTED" });
      result = await handler(JSON.parse(row.payload));
    } catch (err) {
      status = "failed";
      const e = err instanceof DomainError ? err : new DomainError("INTERNAL_ERROR", (err as Error)?.message ?? String(err), { kind: "INTERNAL_SERVER_ERROR" });
      result = { code: e.code, message: e.message, kind: e.kind, ...(e.details !== undefined ? { details: e.details } : {}) } satisfies Failure;
    }
    await this.store.tx((tx) =>
      tx
        .update(serverCommands)
        .set({ status, result: result === undefined ? null : JSON.stringify(result), doneAt: Date.now() })
        .where(eq(serverCommands.id, row.id)),
    );
    await this.signals?.notifyResult(row.id).catch(() => {});
  }

  /** Rows nobody collected (their sender died): dropped after a minute. */
  async prune(now = Date.now()): Promise<void> {
    const { serverCommands } = this.store.t;
    await this.store.tx((tx) => tx.delete(serverCommands).where(lt(serverCommands.createdAt, now - 60_000)));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.values()) w();
    await this.draining;
    await this.unlisten?.().catch(() => {});
  }
}
