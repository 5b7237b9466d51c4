import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The stateful Streamable HTTP sessions of `/mcp` and `/mcp/agents/:id` (http.ts): a client that
 * initializes gets an `mcp-session-id` and a server of its own, which can push notifications
 * (resource subscriptions) on its `GET` stream. This registry bounds them:
 * - at most `max` sessions in all; past that, a new client is served without a session (as the
 *   stateless server: every tool, no subscriptions), and no open session is disturbed;
 * - at most `perAgent` per agent token; a new one ends that agent's least recently used session
 *   (one without an open stream first), so no agent can take the room of others;
 * - a session with no open stream and no request for `idleMs` ends.
 * A session belongs to the principal that opened it, on the path it opened it: the same id with
 * another token or on another path is an unknown session.
 */

export type SessionLimits = { max: number; perAgent: number; idleMs: number; unclaimedMs: number };

export const SESSION_LIMITS: SessionLimits = { max: 100, perAgent: 4, idleMs: 10 * 60_000, unclaimedMs: 60_000 };

export type SessionEntry = {
  id: string;
  /** `human` (the server token, the session cookie, an open loopback server) or `agent:<id>`. */
  owner: string;
  /** `/mcp` or `/mcp/agents/<id>`. */
  route: string;
  lastActive: number;
  /** Open GET streams (0 or 1): a session with one is not idle. */
  streams: number;
  /** A request came with its id after the initialize. */
  claimed: boolean;
  /** Serves one of its requests (its transport's). */
  handleRequest(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** Ends it: its transport, its server, its subscriptions. */
  close(): Promise<void>;
};

export class SessionRegistry {
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly limits: SessionLimits = SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(30_000, limits.unclaimedMs / 2, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Whether `owner` may open one more session now, after making room: an agent over its limit
   * loses its least recently used session, a full server its least recently used one without a
   * stream. False: every session has an open stream (serve this client without one).
   */
  admit(owner: string): boolean {
    if (owner.startsWith("agent:")) {
      const own = byEviction([...this.sessions.values()].filter((s) => s.owner === owner));
      while (own.length >= this.limits.perAgent) void this.end(own.shift()!.id);
    }
    if (this.sessions.size < this.limits.max) return true;
    const quiet = byEviction([...this.sessions.values()].filter((s) => s.streams === 0))[0];
    if (!quiet) return false;
    void this.end(quiet.id);
    return true;
  }

  add(entry: Omit<SessionEntry, "lastActive" | "streams" | "claimed">): SessionEntry {
    const session: SessionEntry = { ...entry, lastActive: this.now(), streams: 0, claimed: false };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session, when `owner` opened it on `route`; touched. Anything else is unknown. */
  find(id: string, owner: string, route: string): SessionEntry | undefined {
    const s = this.sessions.get(id);
    if (!s || s.owner !== owner || s.route !== route) return undefined;
    s.lastActive = this.now();
    s.claimed = true;
    return s;
  }

  streamOpened(s: SessionEntry): void {
    s.streams++;
    s.lastActive = this.now();
  }

  streamClosed(s: SessionEntry): void {
    s.streams = Math.max(0, s.streams - 1);
    s.lastActive = this.now();
  }

  /** Forget a session that ended by itself (DELETE, its transport closed). */
  remove(id: string): void {
    this.sessions.delete(id);
  }

  async end(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    await s.close().catch(() => {});
  }

  /** End the sessions idle for longer than `idleMs` (never claimed: `unclaimedMs`). */
  sweep(): void {
    const now = this.now();
    for (const s of [...this.sessions.values()]) {
      if (s.streams > 0) continue;
      if (now - s.lastActive > (s.claimed ? this.limits.idleMs : this.limits.unclaimedMs)) void this.end(s.id);
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.end(id)));
  }
}

/** Sessions without an open stream first, then the least recently used. */
function byEviction(sessions: SessionEntry[]): SessionEntry[] {
  return sessions.sort((a, b) => Number(a.streams > 0) - Number(b.streams > 0) || a.lastActive - b.lastActive);
}
