import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../lib/process-alive";

/**
 * Test support: hosts in Linux network namespaces on this machine, each joined to the host by a
 * veth pair on a /30 of its own (10.77.<run>.<4i>/30: the host side .4i+1, the namespace .4i+2),
 * plus one address on the host (on its loopback, 10.77.<run>.1) that every namespace reaches
 * through its veth. A /24 per run, chosen with a lock file, so parallel runs do not collide; an
 * `unreachable` route over it keeps a cut veth's packets from taking the host's default route (all
 * traffic stays on this machine). Needs root (CAP_SYS_ADMIN + CAP_NET_ADMIN), iproute2 and
 * util-linux: without them createTestNetwork throws TestNetnsUnavailable saying so, never a skip.
 *
 *   const net = createTestNetwork(3);           // beforeAll
 *   const proc = spawnInNamespace(net.hosts[0], { privateTmp: true, command: ["node", ...] });
 *   net.cut(net.hosts[0]); net.restore(net.hosts[0]);
 *   net.destroy();                                // afterAll: processes, namespaces, links, routes
 */

export class TestNetnsUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TestNetnsUnavailable";
  }
}

export type NetnsHost = {
  /** 1-based. */
  index: number;
  /** The namespace's name (ip netns). */
  ns: string;
  hostIf: string;
  nsIf: string;
  /** The host side's address: what a process in the namespace connects to. */
  hostAddr: string;
  /** The namespace side's address. */
  nsAddr: string;
};

export type TestNetwork = {
  tag: string;
  /** An address of the host that every namespace reaches through its own veth. */
  sharedAddr: string;
  hosts: NetnsHost[];
  /** Take the host side of its veth down: nothing passes until restore. */
  cut(host: NetnsHost): void;
  restore(host: NetnsHost): void;
  /** The processes in its network namespace. */
  pids(host: NetnsHost): number[];
  /** Kill every process in the namespaces, delete them, their links, the shared address and the route. Idempotent. */
  destroy(): void;
};

const LOCKS = join(tmpdir(), "switchyard-netns-locks");
const NEEDS =
  "This test runs hosts in network namespaces: it needs Linux, root (or CAP_SYS_ADMIN + CAP_NET_ADMIN), " +
  "iproute2 (ip netns, veth) and util-linux (unshare, nsenter). Run it as root, e.g. " +
  "`sudo npx vitest run --project integration server/workers/workers-netns.int.test.ts`, or in a container " +
  "started with --cap-add NET_ADMIN --cap-add SYS_ADMIN.";

/** Run a command; throws with its stderr when it fails (unless allowFail). */
export function sh(cmd: string, args: string[], opts: { allowFail?: boolean; input?: string } = {}): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", input: opts.input, timeout: 30_000 });
  const out = { status: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? (r.error ? String(r.error) : "") };
  if (out.status !== 0 && !opts.allowFail) throw new Error(`${cmd} ${args.join(" ")} failed (${out.status}): ${out.stderr.trim() || r.error?.message}`);
  return out;
}

function ip(...args: string[]): void {
  sh("ip", args);
}

/** Throws TestNetnsUnavailable unless namespaces can be made here (a probe namespace, made and deleted). */
export function assertNetnsAvailable(): void {
  if (process.platform !== "linux") throw new TestNetnsUnavailable(`${NEEDS} (this is ${process.platform})`);
  for (const tool of ["ip", "unshare", "nsenter", "mount"]) {
    const found = spawnSync(tool, ["--version"], { encoding: "utf8" });
    if (found.error) throw new TestNetnsUnavailable(`${NEEDS} (${tool} is not on PATH: ${found.error.message})`);
  }
  const probe = `sy-probe-${process.pid}`;
  const made = sh("ip", ["netns", "add", probe], { allowFail: true });
  if (made.status !== 0) throw new TestNetnsUnavailable(`${NEEDS} (\`ip netns add\` failed: ${made.stderr.trim()})`);
  const mounted = sh("ip", ["netns", "exec", probe, "unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], { allowFail: true });
  sh("ip", ["netns", "del", probe], { allowFail: true });
  if (mounted.status !== 0) throw new TestNetnsUnavailable(`${NEEDS} (a tmpfs in a mount namespace failed: ${mounted.stderr.trim()})`);
}

/** A /24 of 10.77.0.0/16 no other run holds (a lock file per octet; a dead run's leftovers are removed). */
function claimOctet(tag: string): number {
  mkdirSync(LOCKS, { recursive: true });
  for (const name of readdirSync(LOCKS)) {
    try {
      const held = JSON.parse(readFileSync(join(LOCKS, name), "utf8")) as { pid: number; tag: string };
      if (!processAlive(held.pid)) {
        removeRun(held.tag, Number(name));
        rmSync(join(LOCKS, name), { force: true });
      }
    } catch {
      // another run is writing it
    }
  }
  const used = sh("ip", ["-o", "-4", "addr"]).stdout;
  for (let tries = 0; tries < 200; tries++) {
    const octet = 1 + Math.floor(Math.random() * 254);
    if (used.includes(`10.77.${octet}.`)) continue;
    try {
      writeFileSync(join(LOCKS, String(octet)), JSON.stringify({ pid: process.pid, tag }), { flag: "wx" });
      return octet;
    } catch {
      // held
    }
  }
  throw new Error("no free 10.77.x.0/24 for the test network");
}

function removeRun(tag: string, octet: number): void {
  const names = sh("ip", ["netns", "list"], { allowFail: true }).stdout;
  for (const line of names.split("\n")) {
    const ns = line.split(" ")[0];
    if (!ns?.startsWith(`sy-${tag}-`)) continue;
    killAll(sh("ip", ["netns", "pids", ns], { allowFail: true }).stdout);
    sh("ip", ["netns", "del", ns], { allowFail: true });
  }
  const links = sh("ip", ["-o", "link"], { allowFail: true }).stdout;
  for (const m of links.matchAll(new RegExp(`^\\d+: (sy${tag}[a-z0-9]+)[@:]`, "gm"))) sh("ip", ["link", "del", m[1]!], { allowFail: true });
  if (!Number.isInteger(octet)) return;
  sh("ip", ["addr", "del", `10.77.${octet}.1/32`, "dev", "lo"], { allowFail: true });
  sh("ip", ["route", "del", "unreachable", `10.77.${octet}.0/24`], { allowFail: true });
}

function killAll(pidLines: string): void {
  for (const p of pidLines.split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(p), "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** `count` hosts in namespaces of their own (see the module comment). Throws TestNetnsUnavailable when it cannot. */
export function createTestNetwork(count: number): TestNetwork {
  assertNetnsAvailable();
  const tag = Math.random().toString(36).slice(2, 6).padEnd(4, "0");
  const octet = claimOctet(tag);
  const net = `10.77.${octet}`;
  const hosts: NetnsHost[] = [];
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    removeRun(tag, octet);
    rmSync(join(LOCKS, String(octet)), { force: true });
  };
  try {
    ip("route", "add", "unreachable", `${net}.0/24`);
    ip("addr", "add", `${net}.1/32`, "dev", "lo");
    for (let i = 1; i <= count; i++) {
      const h: NetnsHost = { index: i, ns: `sy-${tag}-${i}`, hostIf: `sy${tag}h${i}`, nsIf: `sy${tag}n${i}`, hostAddr: `${net}.${4 * i + 1}`, nsAddr: `${net}.${4 * i + 2}` };
      ip("netns", "add", h.ns);
      ip("link", "add", h.hostIf, "type", "veth", "peer", "name", h.nsIf);
      ip("link", "set", h.nsIf, "netns", h.ns);
      ip("addr", "add", `${h.hostAddr}/30`, "dev", h.hostIf);
      ip("link", "set", h.hostIf, "up");
      ip("-n", h.ns, "addr", "add", `${h.nsAddr}/30`, "dev", h.nsIf);
      ip("-n", h.ns, "link", "set", h.nsIf, "up");
      ip("-n", h.ns, "link", "set", "lo", "up");
      // the host's other addresses (the shared one) through its own veth, nowhere else
      ip("-n", h.ns, "route", "add", "default", "via", h.hostAddr);
      hosts.push(h);
    }
  } catch (err) {
    destroy();
    throw err;
  }
  return {
    tag,
    sharedAddr: `${net}.1`,
    hosts,
    cut: (h) => ip("link", "set", h.hostIf, "down"),
    restore: (h) => ip("link", "set", h.hostIf, "up"),
    pids: (h) =>
      sh("ip", ["netns", "pids", h.ns], { allowFail: true })
        .stdout.split(/\s+/)
        .filter(Boolean)
        .map(Number),
    destroy,
  };
}

/**
 * A process in a host's network namespace and a mount namespace of its own, where /tmp is a fresh
 * tmpfs (the host's /tmp, with the server's data dir and repositories, is not there) and `home`
 * is made on it. Its pid is the command's own (ip netns exec, unshare and sh each exec the next).
 */
export function spawnInNamespace(host: NetnsHost, opts: { home: string; command: string[]; env: NodeJS.ProcessEnv; cwd?: string }): ChildProcess {
  const script = 'mount -t tmpfs -o mode=1777 tmpfs /tmp && mkdir -p "$YARD_NS_HOME" && exec "$@"';
  return spawn("ip", ["netns", "exec", host.ns, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", ...opts.command], {
    env: { ...opts.env, YARD_NS_HOME: opts.home },
    cwd: opts.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * Run a command in the network and mount namespaces of a process (what it sees). Asynchronous: a
 * server in this process must go on answering while the command talks to it.
 */
export function inNamespacesOf(pid: number, command: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("nsenter", ["-t", String(pid), "-m", "-n", "--", ...command], { encoding: "utf8", env, timeout: 30_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}
