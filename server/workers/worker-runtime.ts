import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statfsSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { ServerMessage, WORKER_CLOSE, type WorkerCapabilities, type WorkerMessage, type WorkerProvider } from "../../shared/workers";
import type { SessionRef } from "../agents/agent-host";
import { serializeError, sessionPaths } from "../agents/local-host";
import { getProvider, listProviders, resolveCommand } from "../agents/providers";
import { REPO_ROOT } from "../paths";
import { BranchPusher } from "./branch-pusher";
import { WorkerAgentHost } from "./worker-host";

export interface WorkerOptions {
  /** The server's URL as this machine reaches it. */
  serverUrl: string;
  token: string;
  name: string;
  capacity: number;
  labels: string[];
  /** This worker's data dir: its clones, worktrees and agents' folders. */
  home: string;
  version: string;
  /** Provider CLIs by name (`claude=/opt/claude`), as SWITCHYARD_AGENT_COMMANDS on a server. */
  commands?: Record<string, string>;
  log(line: string): void;
}

interface Running {
  ref: SessionRef;
  /** The session's working directory (its worktree), whose branch is pushed as it moves. */
  cwd?: string;
  /** The connection epoch it was started (or last kept) under. */
  epoch: number;
}

const SESSIONS_FILE = "worker-sessions.json";
/** The longest wait between two connection attempts. */
const MAX_BACKOFF_MS = 5_000;

/**
 * `yard worker`: connects to a server over one WebSocket (`/worker`, with its own token), says what
 * it has, and runs the calls of the session seam the server sends on this machine. Reconnects with
 * a back-off. With no word from the server for the self-stop delay it stops its agents (no copy of
 * an agent keeps working once the server may have placed it elsewhere); when it is back, the server
 * tells which of its sessions are still its own.
 */
export class WorkerRuntime {
  private socket: WebSocket | undefined;
  private epoch = 0;
  private lastContact = Date.now();
  private selfStopMs = 10_000;
  /** No word this long (the server pings every heartbeat): the connection is taken for dead. */
  private silentMs = 5_000;
  private readonly host: WorkerAgentHost;
  private readonly running = new Map<string, Running>();
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private backoffMs = 500;
  private providers: WorkerProvider[] = [];
  private connectedOnce: (() => void) | undefined;
  private ticks = 0;
  /** The last refusal logged (a refusal repeated at each attempt is logged once). */
  private lastRefusal = "";
  private readonly pusher: BranchPusher;

  constructor(private readonly opts: WorkerOptions) {
    mkdirSync(opts.home, { recursive: true });
    // the agents' environment: this machine's as it was before the worker's own git settings
    const agentEnv = { ...process.env };
    // the worker's git (clone, fetch, push) sends its token to the server, and never prompts
    const base = opts.serverUrl.replace(/\/+$/, "");
    Object.assign(process.env, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `http.${base}/git/.extraHeader`,
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${opts.token}`,
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "true",
    });
    this.host = new WorkerAgentHost({ home: opts.home, env: agentEnv, serverUrl: base });
    this.pusher = new BranchPusher({ log: opts.log });
    this.loadSessions();
  }

  /** Find the CLIs, connect, and keep connecting until stopped. Resolves once connected the first time. */
  async start(): Promise<void> {
    this.providers = await detectProviders(this.opts.commands ?? {});
    this.timer = setInterval(() => this.tick(), 1_000);
    const connected = new Promise<void>((resolve) => (this.connectedOnce = resolve));
    this.connect();
    await connected;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.socket?.close(WORKER_CLOSE.goingAway, "worker stopping");
  }

  private capabilities(): WorkerCapabilities {
    let diskFree: number | null = null;
    try {
      const s = statfsSync(this.opts.home);
      diskFree = s.bavail * s.bsize;
    } catch {
      diskFree = null;
    }
    return {
      version: this.opts.version,
      hostname: hostname(),
      home: this.opts.home,
      capacity: this.opts.capacity,
      labels: this.opts.labels,
      providers: this.providers,
      diskFree,
      serverUrl: this.opts.serverUrl.replace(/\/+$/, ""),
    };
  }

  private connect(): void {
    if (this.stopping) return;
    const url = `${this.opts.serverUrl.replace(/^http/, "ws").replace(/\/+$/, "")}/worker`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.opts.token}` }, handshakeTimeout: 5_000 });
    this.socket = socket;
    socket.on("open", () => {
      this.lastContact = Date.now();
      const running = [...this.running.values()].map((r) => ({ agentId: r.ref.agentId, session: r.ref.session, epoch: r.epoch }));
      this.send({ type: "hello", capabilities: this.capabilities(), running });
    });
    socket.on("ping", () => (this.lastContact = Date.now()));
    socket.on("message", (data) => {
      this.lastContact = Date.now();
      void this.receive(data.toString());
    });
    socket.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => {
        const said = `the server refused this worker (HTTP ${res.statusCode}): ${body.trim()}`;
        if (said !== this.lastRefusal) this.opts.log(`${said}; trying again every ${Math.round(MAX_BACKOFF_MS / 1000)} s at most`);
        this.lastRefusal = said;
        // with a listener here ws leaves the handshake open: end it, so "close" comes and the worker
        // tries again (a token made on another server of the database reaches this one within seconds)
        socket.terminate();
      });
    });
    socket.on("close", (code, reason) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.stopping) return;
      const why = reason.toString();
      this.opts.log(`disconnected from ${this.opts.serverUrl} (${code}${why ? `: ${why}` : ""}); reconnecting`);
      const delay = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      setTimeout(() => this.connect(), delay).unref();
    });
    socket.on("error", () => undefined);
  }

  private send(msg: WorkerMessage): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(msg));
  }

  private async receive(raw: string): Promise<void> {
    let msg: ServerMessage;
    try {
      msg = ServerMessage.parse(JSON.parse(raw));
    } catch {
      this.opts.log("the server sent a frame this worker does not understand (run the same Switchyard version)");
      return;
    }
    if (msg.type === "welcome") {
      this.epoch = msg.epoch;
      this.lastRefusal = "";
      this.selfStopMs = msg.lostAfterMs;
      this.silentMs = Math.min(5 * msg.heartbeatMs, msg.lostAfterMs / 2);
      this.backoffMs = 500;
      const stop = new Set(msg.stop.map((s) => `${s.agentId}:${s.session}`));
      for (const [key, r] of this.running) {
        if (stop.has(`${r.ref.agentId}:${r.ref.session}`)) {
          this.opts.log(`agent ${r.ref.agentId} is no longer this worker's: stopping its session ${r.ref.session}`);
          await this.host.call("stopSession", [r.ref, { graceMs: 2_000 }]).catch(() => undefined);
          this.forget(key);
        } else r.epoch = msg.epoch;
      }
      this.saveSessions();
      this.opts.log(`connected to ${this.opts.serverUrl} as ${this.opts.name} (epoch ${msg.epoch}, ${this.running.size} session(s) kept)`);
      this.connectedOnce?.();
      this.connectedOnce = undefined;
      return;
    }
    if (msg.epoch !== this.epoch) {
      this.send({ type: "result", id: msg.id, ok: false, error: { name: "DomainError", message: "a call from an older connection", code: "WORKER_STALE_EPOCH", kind: "CONFLICT" } });
      return;
    }
    try {
      const value = await this.host.call(msg.call, msg.args);
      if (msg.call === "startSession") this.track(value as SessionRef, (msg.args[0] as { cwd?: string }).cwd);
      if (msg.call === "stopSession" || msg.call === "removeAgentDir") this.untrackEnded();
      this.send({ type: "result", id: msg.id, ok: true, ...(value === undefined ? {} : { value }) });
    } catch (err) {
      this.send({ type: "result", id: msg.id, ok: false, error: serializeError(err) });
    }
  }

  /** A session started here: kept across reconnections (and restarts of the worker), its output watched. */
  private track(ref: SessionRef, cwd: string | undefined): void {
    const key = `${ref.agentId}:${ref.session}`;
    this.running.set(key, { ref, epoch: this.epoch, ...(cwd ? { cwd } : {}) });
    this.watchOutput(key, ref);
    if (cwd) this.pusher.watch(key, cwd);
    this.saveSessions();
  }

  private watchOutput(key: string, ref: SessionRef): void {
    const path = sessionPaths(ref.dir, ref.session).stdout;
    let queued = false;
    const notify = () => {
      if (queued) return;
      queued = true;
      // a burst of writes is one notice
      setTimeout(() => {
        queued = false;
        this.send({ type: "output", agentId: ref.agentId, session: ref.session });
      }, 5).unref();
    };
    try {
      if (!existsSync(path)) writeFileSync(path, "", { flag: "a" });
      this.watchers.set(key, watch(path, { persistent: false }, notify));
    } catch {
      // the server polls anyway
    }
  }

  private forget(key: string): void {
    this.running.delete(key);
    this.pusher.forget(key);
    this.watchers.get(key)?.close();
    this.watchers.delete(key);
  }

  /** Sessions whose process ended are forgotten (their files stay for the server to read). */
  private untrackEnded(): void {
    void (async () => {
      for (const [key, r] of this.running) {
        const state = await this.host.call("sessionState", [r.ref]).catch(() => null);
        if (state && !(state as { running: boolean }).running) this.forget(key);
      }
      this.saveSessions();
    })();
  }

  private tick(): void {
    if (this.stopping) return;
    const silent = Date.now() - this.lastContact;
    if (silent > this.silentMs && this.socket?.readyState === WebSocket.OPEN) {
      // the server has cut a worker this silent: a new connection, rather than wait for TCP's
      // retransmissions (seconds apart after a blip) to learn that the old one is dead
      this.opts.log(`the server has been silent for ${Math.round(silent / 1000)} s: connecting again`);
      this.socket.terminate();
    }
    if (silent > this.selfStopMs && this.running.size > 0) {
      this.opts.log(`no word from the server for ${Math.round(silent / 1000)} s: stopping this worker's ${this.running.size} agent session(s), so no copy keeps working`);
      for (const [key, r] of this.running) {
        void this.host.call("stopSession", [r.ref, { graceMs: 1_000 }]).catch(() => undefined);
        this.forget(key);
      }
      this.saveSessions();
      this.socket?.terminate();
    }
    // agents' new commits go to the server as they come (only while it can fence them)
    if (this.running.size > 0 && this.socket?.readyState === WebSocket.OPEN) void this.pusher.tick();
    // every 10 s: sessions whose process ended are forgotten
    if (this.running.size > 0 && ++this.ticks % 10 === 0) this.untrackEnded();
  }

  private loadSessions(): void {
    try {
      const list = JSON.parse(readFileSync(join(this.opts.home, SESSIONS_FILE), "utf8")) as Running[];
      for (const r of list) {
        const key = `${r.ref.agentId}:${r.ref.session}`;
        this.running.set(key, r);
        this.watchOutput(key, r.ref);
        if (r.cwd) this.pusher.watch(key, r.cwd);
      }
    } catch {
      // none yet
    }
  }

  private saveSessions(): void {
    writeFileSync(join(this.opts.home, SESSIONS_FILE), JSON.stringify([...this.running.values()]), { mode: 0o600 });
  }
}

/** The provider CLIs on this machine, with what `--version` prints (first line; null when it does not answer in 5 s). */
async function detectProviders(overrides: Record<string, string>): Promise<WorkerProvider[]> {
  const found: WorkerProvider[] = [];
  for (const p of listProviders()) {
    const command = resolveCommand(getProvider(p.name), { repoRoot: REPO_ROOT, pathEnv: process.env.PATH ?? "", override: overrides[p.name] });
    if (!command) continue;
    found.push({ name: p.name, command, version: await versionOf(command) });
  }
  return found;
}

function versionOf(command: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(command, ["--version"], { timeout: 5_000 }, (err, stdout) => resolve(err ? null : (stdout.toString().split("\n")[0]?.trim() || null)));
  });
}
