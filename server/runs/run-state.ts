import { randomUUID } from "node:crypto";
import type { EventPayload, EventType } from "../../shared/events";
import type { AgentCallRecord, PendingRequest, PermissionDecision, StepResult, Usage } from "../../shared/runs";
import type { Strategy } from "../../shared/strategy";
import type { RunStatus } from "../../shared/statuses";
import type { EventBus } from "../events/bus";
import type { EventFence } from "../events/event-store";
import { nextRunStatus } from "./run-lifecycle";

/** Thrown into everything a run waits on when it is stopped. */
export class RunCancelledError extends Error {
  readonly code = "CANCELLED";
  constructor(message = "Run cancelled") {
    super(message);
  }
}

export type Answer = { text: string; decision?: PermissionDecision; source: "human" | "agent" | "policy" };

/** A request before it has an id and a time (distributes over the kinds). */
export type DraftRequest = PendingRequest extends infer R ? (R extends PendingRequest ? Omit<R, "requestId" | "createdAt"> : never) : never;

/** An open request; `answered` from the answer on (its run.request_answered may still be committing). */
type Waiter = { request: PendingRequest; resolve: (a: Answer) => void; reject: (e: Error) => void; answered?: boolean };

/** What a resumed segment already did: completed steps and calls are not run again. */
export type Memo = {
  steps: Map<string, StepResult>;
  startedSteps: Set<string>;
  calls: Map<string, AgentCallRecord>;
  /** Requests still open when the server stopped, by their re-attach key. */
  openRequests: Map<string, PendingRequest>;
  /** The CLI agent each `type: cli` step started, by step key (re-attached after a restart). */
  cliAgents: Map<string, string>;
};

export const emptyMemo = (): Memo => ({ steps: new Map(), startedSteps: new Set(), calls: new Map(), openRequests: new Map(), cliAgents: new Map() });

/** The re-attach key of a request: where in the flow it was asked, and what. */
export function requestKey(r: Pick<PendingRequest, "kind" | "stepKey"> & { toolName?: string; resource?: string; question?: string }): string {
  return [r.kind, r.stepKey ?? "", r.toolName ?? "", r.resource ?? r.question ?? ""].join("|");
}

/**
 * The run's permission policy, as the engine sees it (server/tools implements it). `update` throws
 * a GlobError (server/tools/globs.ts) for a pattern that does not parse, and changes nothing.
 */
export type PolicyPort = {
  update(change: { tool?: string; mode: "read" | "write"; allow?: string[]; deny?: string[]; default?: "allow" | "deny" | "ask" }): void;
  remember(tool: string, operation: "fs.read" | "fs.write" | "fs.exec", resource: string, decision: "allow-session" | "deny-session"): void;
  toJSON(): Record<string, unknown>;
};

export type RunConfig = {
  runId: string;
  strategy: Strategy;
  strategyPath: string;
  cwd: string;
  manifestPath?: string;
  modelOverride?: string;
  /** The run's own budget (tRPC prepare); else the strategy's `budget`. Applies to each segment. */
  budget?: { tokens?: number; usd?: number };
  /** Strategy warnings, announced when the run starts. */
  warnings?: Array<{ path?: string; message: string }>;
};

/** Where a segment that was waiting when the server stopped stands, read back from its timeline. */
export type ResumePoint = {
  segment: number;
  requestId?: string;
  memo: Memo;
  usage: Usage;
  startedAt: number;
  /** Every agent call of the run so far: the conversations to restore. */
  records: AgentCallRecord[];
};

/**
 * One run in memory: its config, its segment, what it waits on, its abort controller. Every
 * change is announced on the bus under scope runId; nothing else reports run status. Its state is
 * private: other modules read it through getters and change it through the methods below. Its
 * status moves only along the transition table (`run-lifecycle.ts`), through RunLifecycle.
 */
export class RunState {
  readonly runId: string;
  readonly config: RunConfig;
  #status: RunStatus = "pending";
  /** The segment being (or last) executed; 0 before the first start. */
  #segment = 0;
  #serverStopping = false;
  #continuation = false;
  /** Each agent's earlier calls (restored from the timeline, grown as the run goes). */
  readonly #history = new Map<string, AgentCallRecord[]>();
  #abort = new AbortController();
  #requestId?: string;
  #memo: Memo = emptyMemo();
  readonly #steerQueue: string[] = [];
  readonly #usage: Usage = { promptTokens: 0, completionTokens: 0 };
  readonly #spent = { tokens: 0, usd: 0 };
  readonly #waiters = new Map<string, Waiter>();
  #finished?: Promise<void>;
  /** Warnings already announced in this run (each once). */
  readonly #warned = new Set<string>();
  #startedAt = Date.now();
  #completedAt?: number;

  constructor(
    config: RunConfig,
    private readonly bus: EventBus,
    readonly policy: PolicyPort,
    /** This server's lease on the run, when several servers share the store (its events are fenced by it). */
    private readonly fence?: () => EventFence | undefined,
  ) {
    this.runId = config.runId;
    this.config = config;
  }

  get status(): RunStatus {
    return this.#status;
  }

  get segment(): number {
    return this.#segment;
  }

  /** Cancelled because the server stops (the run resumes at the next start), not by a user. */
  get serverStopping(): boolean {
    return this.#serverStopping;
  }

  /** Prepared from a persisted timeline: only continue_run may start it. */
  get continuation(): boolean {
    return this.#continuation;
  }

  /** The start_run / continue_run requestId that lifecycle events echo. */
  get requestId(): string | undefined {
    return this.#requestId;
  }

  /** What this segment already did (a resumed one), and what it has done since. */
  get memo(): Memo {
    return this.#memo;
  }

  /** Each agent's calls, oldest first: its conversation. */
  get history(): ReadonlyMap<string, readonly AgentCallRecord[]> {
    return this.#history;
  }

  /** Tokens of this segment. */
  get usage(): Readonly<Usage> {
    return this.#usage;
  }

  /** Tokens and dollars spent in this segment (budgets). */
  get spent(): Readonly<{ tokens: number; usd: number }> {
    return this.#spent;
  }

  get warnings(): Array<{ path?: string; message: string }> {
    return this.config.warnings ?? [];
  }

  get startedAt(): number {
    return this.#startedAt;
  }

  get completedAt(): number | undefined {
    return this.#completedAt;
  }

  /** The segment's execution: settles once its run.completed is out (stop and shutdown wait on it). */
  get finished(): Promise<void> | undefined {
    return this.#finished;
  }

  emit<T extends EventType>(type: T, payload: EventPayload<T>) {
    const fence = this.fence?.();
    return this.bus.publish(type, payload, { runId: this.runId }, fence ? { fence } : undefined);
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  pendingRequests(): PendingRequest[] {
    return [...this.#waiters.values()].filter((w) => !w.answered).map((w) => w.request);
  }

  findRequest(predicate: (r: PendingRequest) => boolean): PendingRequest | undefined {
    return this.pendingRequests().find(predicate);
  }

  /**
   * Open a request to a human (or re-attach to one that was open before a restart) and wait for
   * the answer. The request event is persisted first, so a restart finds it.
   */
  async ask(draft: DraftRequest, extra: { toolName?: string; resource?: string; question?: string } = {}): Promise<Answer> {
    if (this.signal.aborted) throw new RunCancelledError();
    const key = requestKey({ ...draft, ...extra } as PendingRequest);
    const reopened = this.#memo.openRequests.get(key);
    if (reopened) this.#memo.openRequests.delete(key);
    const request = (reopened ?? { ...draft, requestId: randomUUID(), createdAt: new Date().toISOString() }) as PendingRequest;
    const answered = new Promise<Answer>((resolve, reject) => this.#waiters.set(request.requestId, { request, resolve, reject }));
    // a cancel while run.request_opened commits rejects it before it is awaited below: not unhandled
    answered.catch(() => {});
    if (!reopened) await this.emit("run.request_opened", { request });
    try {
      const answer = await answered;
      await this.emit("run.request_answered", {
        requestId: request.requestId,
        kind: request.kind,
        agentName: request.agentName,
        answer: answer.text,
        decision: answer.decision,
        source: answer.source,
      });
      return answer;
    } finally {
      this.#waiters.delete(request.requestId);
    }
  }

  /** Deliver an answer; false when no such request is open. */
  answer(requestId: string, answer: Answer): boolean {
    const waiter = this.#waiters.get(requestId);
    // answered once: a second answer (another tab, a retry) finds nothing open
    if (!waiter || waiter.answered) return false;
    waiter.answered = true;
    waiter.resolve(answer);
    return true;
  }

  /** Abort the model calls, the tools and every wait. */
  cancel(reason = "Run cancelled"): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(new RunCancelledError(reason));
    for (const w of this.#waiters.values()) w.reject(new RunCancelledError(reason));
  }

  /** The server stops: abort as `cancel` does, but the run resumes at the next start. */
  stopForShutdown(): void {
    this.#serverStopping = true;
    this.cancel("Server shutting down");
  }

  /** The user steered: the text goes to the next agent call. */
  queueSteering(text: string): void {
    this.#steerQueue.push(text);
  }

  /** Texts steered in since the last agent call (and forget them). */
  takeSteering(): string[] {
    return this.#steerQueue.splice(0, this.#steerQueue.length);
  }

  addUsage(u: Usage): void {
    this.#usage.promptTokens += u.promptTokens;
    this.#usage.completionTokens += u.completionTokens;
  }

  /** An agent call was charged to this segment's budget. */
  spend(tokens: number, usd: number): void {
    this.#spent.tokens += tokens;
    this.#spent.usd += usd;
  }

  /** An agent call finished: it joins its agent's conversation. */
  recordCall(record: AgentCallRecord): void {
    const list = this.#history.get(record.agentName);
    if (list) list.push(record);
    else this.#history.set(record.agentName, [record]);
  }

  /** Announce a warning, once per run. */
  async warnOnce(message: string, path?: string): Promise<void> {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    await this.emit("run.warned", { message, ...(path !== undefined ? { path } : {}) });
  }

  /** The segment's execution began (stop and shutdown wait for it to settle). */
  executing(execution: Promise<void>): void {
    this.#finished = execution;
  }

  /** Prepared from its timeline (continue_run): its last segment and its agents' conversations. */
  preparedFrom(segment: number, records: readonly AgentCallRecord[]): void {
    this.#continuation = true;
    this.#segment = segment;
    this.restoreConversations(records);
  }

  // The lifecycle moves below are RunLifecycle.transition's in-memory half: each checks the
  // transition table, and RunLifecycle writes the row and the event of the move.

  /** A new segment (start, continue): fresh abort controller, fresh memo, usage from zero. */
  beginSegment(requestId: string | undefined, event: "start" | "continue" = "start"): void {
    this.#status = nextRunStatus(this.runId, this.#status, event);
    this.#segment += 1;
    this.#abort = new AbortController();
    this.#requestId = requestId;
    this.#memo = emptyMemo();
    this.#usage.promptTokens = 0;
    this.#usage.completionTokens = 0;
    this.#spent.tokens = 0;
    this.#spent.usd = 0;
    this.#startedAt = Date.now();
    this.#completedAt = undefined;
  }

  /** After a restart: the segment that was waiting goes on where its timeline left it. */
  resumeSegment(at: ResumePoint): void {
    this.#status = nextRunStatus(this.runId, this.#status, "resume");
    this.#segment = at.segment;
    this.#abort = new AbortController();
    this.#requestId = at.requestId;
    this.#memo = at.memo;
    this.#usage.promptTokens = at.usage.promptTokens;
    this.#usage.completionTokens = at.usage.completionTokens;
    this.#startedAt = at.startedAt;
    this.restoreConversations(at.records);
  }

  /** The segment ended: everything it still runs or waits on is aborted. */
  endSegment(event: "complete" | "fail" | "cancel" | "interrupt"): void {
    this.#status = nextRunStatus(this.runId, this.#status, event);
    this.#completedAt = Date.now();
    this.cancel("Run finished");
  }

  /** A prepared run is let go before it started (nothing of it was stored). */
  release(): void {
    this.#status = nextRunStatus(this.runId, this.#status, "cancel");
  }

  /** Each agent's conversation, rebuilt from the run's agent_called records (continue, resume). */
  private restoreConversations(records: readonly AgentCallRecord[]): void {
    for (const record of records) this.recordCall(record);
  }
}
