import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { SwitchyardClient } from "../client";
import { resourceError } from "./resources";
import { ToolFailure } from "./tool-kit";

/**
 * `resources/subscribe` on a run's timeline or an agent's log: while it grows, the client gets
 * `notifications/resources/updated` with the URI it subscribed to, at most one per
 * `minIntervalMs` per resource (the first at once, the rest coalesced), and reads the resource
 * again to see what is new. Only where there is a session to push to: `yard mcp` (stdio) and the
 * stateful HTTP sessions (http.ts); the stateless `/mcp` advertises `subscribe: false`.
 *
 * A subscription follows the typed client's own subscriptions (`runs.onEvents`,
 * `agents.onOutput`) from the newest event id (`system.info`), after reading the run or the agent
 * with the same client: an agent's token may subscribe to exactly what it may read.
 */

/** What a subscribable URI follows (the page variants `?after=` / `?from=` follow the same thing). */
export type Watched = { kind: "run"; runId: string } | { kind: "agent"; agentRef: string };

const WATCHABLE = /^switchyard:\/\/(runs|agents)\/([^/?#]+)\/(timeline|log)(?:\?[^#]*)?$/;

export function watchedOf(uri: string): Watched | null {
  const m = WATCHABLE.exec(uri);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[2]!);
  } catch {
    return null;
  }
  if (m[1] === "runs" && m[3] === "timeline") return { kind: "run", runId: id };
  if (m[1] === "agents" && m[3] === "log") return { kind: "agent", agentRef: id };
  return null;
}

export type SubscriptionOptions = {
  /** The least time between two notifications of one resource (default 250 ms: at most 4 a second). */
  minIntervalMs?: number;
  /** The most resources one session follows at once (default 100). */
  max?: number;
};

export const NOTIFY_EVERY_MS = 250;
export const MAX_SUBSCRIPTIONS = 100;

/** Calls `fire` at once, then at most once per `minMs`: what arrives in between is one trailing call. */
export class Throttle {
  private last = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly minMs: number,
    private readonly fire: () => void,
  ) {}

  poke(): void {
    if (this.stopped || this.timer) return;
    const wait = this.last + this.minMs - Date.now();
    if (wait <= 0) return this.emit();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.emit();
    }, wait);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private emit(): void {
    if (this.stopped) return;
    this.last = Date.now();
    this.fire();
  }
}

type Subscription = { throttle: Throttle; stop?: () => void; closed: boolean };

/** One session's subscriptions, by the URI the client subscribed to. */
export class ResourceSubscriptions {
  private readonly subs = new Map<string, Subscription>();
  private readonly minIntervalMs: number;
  private readonly max: number;

  constructor(
    private readonly yard: SwitchyardClient,
    private readonly notify: (uri: string) => Promise<void>,
    options: SubscriptionOptions = {},
  ) {
    this.minIntervalMs = options.minIntervalMs ?? NOTIFY_EVERY_MS;
    this.max = options.max ?? MAX_SUBSCRIPTIONS;
  }

  get size(): number {
    return this.subs.size;
  }

  /** Resolves once the subscription is live; throws (no such run or agent, not allowed, a URI that does not grow). */
  async subscribe(uri: string): Promise<void> {
    if (this.subs.has(uri)) return;
    const watched = watchedOf(uri);
    if (!watched) throw new ToolFailure("BAD_INPUT", `Only a run's timeline (switchyard://runs/<runId>/timeline) or an agent's log (switchyard://agents/<id>/log) can be subscribed to, not ${uri}`);
    if (this.subs.size >= this.max) throw new ToolFailure("TOO_MANY_SUBSCRIPTIONS", `A session follows at most ${this.max} resources: unsubscribe from one first`);
    const sub: Subscription = { throttle: new Throttle(this.minIntervalMs, () => void this.notify(uri).catch(() => {})), closed: false };
    this.subs.set(uri, sub);
    try {
      const stop = await follow(this.yard, watched, () => sub.throttle.poke(), () => this.drop(uri, sub));
      if (sub.closed) stop();
      else sub.stop = stop;
    } catch (err) {
      this.drop(uri, sub);
      throw err;
    }
  }

  unsubscribe(uri: string): void {
    const sub = this.subs.get(uri);
    if (sub) this.drop(uri, sub);
  }

  close(): void {
    for (const [uri, sub] of [...this.subs]) this.drop(uri, sub);
  }

  private drop(uri: string, sub: Subscription): void {
    sub.closed = true;
    sub.throttle.stop();
    sub.stop?.();
    if (this.subs.get(uri) === sub) this.subs.delete(uri);
  }
}

/**
 * Follow a run's events (the streamed text deltas left out, as the timeline leaves them out) or
 * an agent's output lines from now on; `grew` on each batch that changes what the resource shows.
 */
async function follow(yard: SwitchyardClient, watched: Watched, grew: () => void, ended: () => void): Promise<() => void> {
  if (watched.kind === "run") {
    const run = await yard.runs.get.query({ runId: watched.runId });
    const from = String((await yard.system.info.query()).lastEventId);
    const sub = yard.runs.onEvents.subscribe(
      { runId: run.runId, lastEventId: from },
      { onData: (batch) => batch.data.some((e) => e.type !== "run.agent_streamed") && grew(), onError: ended, onComplete: ended },
    );
    return () => sub.unsubscribe();
  }
  const agent = await yard.agents.get.query({ agentId: watched.agentRef });
  const from = String((await yard.system.info.query()).lastEventId);
  const sub = yard.agents.onOutput.subscribe(
    { agentId: agent.id, lastEventId: from, format: "raw" },
    { onData: (batch) => batch.data.lines.length > 0 && grew(), onError: ended, onComplete: ended },
  );
  return () => sub.unsubscribe();
}

/**
 * Offer subscriptions on this server (one per session): `subscribe: true` in its capabilities,
 * the subscribe and unsubscribe handlers, everything stopped when the server closes. Without
 * it (the stateless `/mcp`) the server says `subscribe: false`. Either way `listChanged: false`:
 * the list (the 20 latest runs and agents) is read again with `resources/list`.
 */
export function registerSubscriptions(server: McpServer, yard: SwitchyardClient, options: SubscriptionOptions = {}): ResourceSubscriptions {
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: false } });
  const subs = new ResourceSubscriptions(yard, (uri) => server.server.sendResourceUpdated({ uri }), options);
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    try {
      await subs.subscribe(req.params.uri);
    } catch (err) {
      throw resourceError(err);
    }
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subs.unsubscribe(req.params.uri);
    return {};
  });
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    subs.close();
    onclose?.();
  };
  return subs;
}
