import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isLoopbackHost } from "../config";

/**
 * Request guard, run before routing for every HTTP request and WebSocket upgrade:
 * Host (against DNS rebinding), Origin (against cross-site requests), then the token.
 */
export type GuardOptions = {
  boundHost: string;
  port: () => number;
  allowedHosts: readonly string[];
  token?: string;
  /** Extra bearer tokens (e.g. agent-scoped ones) accepted besides the main token. */
  /** The agent a bearer token was minted for (agents' own scoped tokens), or null. */
  agentOf?: (token: string) => string | null;
  /** The worker a bearer token belongs to (`yard worker token create`), or null: it may use /worker and /git/ only. */
  workerOf?: (token: string) => string | null;
};

/**
 * Who a request is: the server's token, a dashboard session, anyone (no token configured), or an
 * agent by its own token, whose rights are its own (trpc/agent-scope.ts) even where a human's are open.
 */
export type Principal = { kind: "token" | "cookie" | "open" } | { kind: "agent"; agentId: string } | { kind: "worker"; worker: string };
export type GuardResult = ({ ok: true } & Principal) | { ok: false; status: 401 | 403; reason: string };

export const LOGIN_PATH = "/login";

export function sessionCookieName(port: number): string {
  return `switchyard_session_${port}`;
}

/** The cookie value a browser gets after login: derived from the token, so it outlives restarts. */
export function sessionValue(token: string): string {
  return createHmac("sha256", token).update("switchyard-session-v1").digest("base64url");
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Split a Host header into hostname and port; IPv6 keeps its brackets off. */
export function parseHost(value: string | undefined): { hostname: string; port?: string } | undefined {
  if (!value) return undefined;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value.trim().toLowerCase());
  if (!m) return undefined;
  return { hostname: m[1]!.replace(/^\[|\]$/g, ""), port: m[2] };
}

export function createGuard(opts: GuardOptions) {
  const allowed = new Set(["localhost", "127.0.0.1", "::1", ...opts.allowedHosts.map((h) => h.toLowerCase())]);
  if (!["0.0.0.0", "::"].includes(opts.boundHost)) allowed.add(opts.boundHost.toLowerCase().replace(/^\[|\]$/g, ""));

  function hostAllowed(hostname: string): boolean {
    return allowed.has(hostname) || (isLoopbackHost(hostname) && isLoopbackHost(opts.boundHost));
  }

  function cookieOf(req: IncomingMessage, name: string): string | undefined {
    const header = req.headers.cookie;
    if (!header) return undefined;
    for (const part of header.split(";")) {
      const eq = part.indexOf("=");
      if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
    }
    return undefined;
  }

  function check(req: IncomingMessage): GuardResult {
    const host = parseHost(req.headers.host);
    if (!host || !hostAllowed(host.hostname)) {
      return { ok: false, status: 403, reason: `Host "${req.headers.host ?? ""}" is not allowed (set SWITCHYARD_ALLOWED_HOSTS to add it)` };
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost: ReturnType<typeof parseHost>;
      try {
        const u = new URL(origin);
        originHost = u.protocol === "http:" || u.protocol === "https:" ? parseHost(u.host) : undefined;
      } catch {
        originHost = undefined;
      }
      const samePort = (originHost?.port ?? "80") === (host.port ?? "80");
      if (!originHost || !hostAllowed(originHost.hostname) || !samePort) {
        return { ok: false, status: 403, reason: `Cross-origin request from "${origin}" refused` };
      }
    }
    const auth = req.headers.authorization;
    if (auth?.startsWith("Bearer ")) {
      const given = auth.slice(7).trim();
      if (opts.token && safeEqual(given, opts.token)) return { ok: true, kind: "token" };
      // an agent's token makes it that agent, with a token on the server or without one
      const agentId = opts.agentOf?.(given) ?? null;
      if (agentId !== null) return { ok: true, kind: "agent", agentId };
      const worker = opts.workerOf?.(given) ?? null;
      if (worker !== null) return { ok: true, kind: "worker", worker };
      // a worker's token that is wrong or revoked is refused even where no token is required: the worker must hear it
      if (opts.workerOf && given.startsWith("syw.")) return { ok: false, status: 401, reason: "Invalid or revoked worker token" };
      if (opts.token) return { ok: false, status: 401, reason: "Invalid token" };
    }
    if (!opts.token) return { ok: true, kind: "open" };
    const path = (req.url ?? "/").split("?")[0];
    if (path === LOGIN_PATH) return { ok: true, kind: "open" };
    const cookie = cookieOf(req, sessionCookieName(opts.port()));
    if (cookie && safeEqual(cookie, sessionValue(opts.token))) return { ok: true, kind: "cookie" };
    return { ok: false, status: 401, reason: "Authentication required: send Authorization: Bearer <SWITCHYARD_TOKEN>, or open the login link the server printed" };
  }

  return { check };
}

/** One-time login codes for the link printed at start (and minted by `yard login`). */
export class LoginCodes {
  private readonly codes = new Map<string, number>();

  constructor(private readonly ttlMs = 15 * 60_000) {}

  mint(): string {
    const code = randomBytes(24).toString("base64url");
    this.codes.set(code, Date.now() + this.ttlMs);
    return code;
  }

  /** True once per valid code. */
  redeem(code: string): boolean {
    const expires = this.codes.get(code);
    this.codes.delete(code);
    return expires !== undefined && expires > Date.now();
  }
}
