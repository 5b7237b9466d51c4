import type { AgentHost } from "./agent-host";
import { deserializeError, serializeError } from "./local-host";

/** Every call of the seam, by name: what a remote host (a worker) answers. */
export const HOST_CALLS = [
  "startSession",
  "sessionState",
  "waitForExit",
  "stopSession",
  "readOutput",
  "prepareLaunch",
  "copySession",
  "writeConfigFiles",
  "readConfigFiles",
  "removeAgentDir",
  "writeInputFiles",
  "readSignal",
  "signalWritten",
  "clearSignal",
  "createWorkspace",
  "workspaceExists",
  "removeWorkspace",
  "restoreWorktree",
  "archiveWorkspace",
  "pruneWorktrees",
  "dirtyFiles",
  "changes",
  "diff",
  "summary",
  "commitsAhead",
  "commitsSince",
  "commitWorktree",
  "push",
  "worktreeGit",
  "diskUsage",
] as const satisfies ReadonlyArray<Exclude<keyof AgentHost, HostFacts>>;

/** What a host is (its name, its data dir, where its agents reach the server), not calls. */
type HostFacts = "name" | "home" | "serverUrl" | "providerCommand" | "onOutput";

export type HostCall = (typeof HOST_CALLS)[number];

// a call added to the interface but not to the list above does not compile
type Unlisted = Exclude<Exclude<keyof AgentHost, HostFacts>, HostCall>;
const everyCallListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyCallListed;

/**
 * The host behind a JSON round trip: every argument, result and error goes through
 * JSON.stringify/parse, as it will to a worker on another machine. A value JSON would change (a
 * function, a Buffer, a Map, a Date, NaN, undefined in an array) is refused with its path, so a
 * call that only works in-process fails the tests that run through this host.
 */
export function loopbackHost(inner: AgentHost): AgentHost {
  const host: Record<string, unknown> = { name: `loopback(${inner.name})`, home: inner.home };
  for (const call of HOST_CALLS) {
    host[call] = async (...args: unknown[]) => {
      assertJson(args, `${call}(args)`);
      const sent = JSON.parse(JSON.stringify(args)) as unknown[];
      let result: unknown;
      try {
        result = await (inner[call] as (...a: unknown[]) => Promise<unknown>)(...sent);
      } catch (err) {
        throw deserializeError(JSON.parse(JSON.stringify(serializeError(err))));
      }
      if (result === undefined) return undefined;
      assertJson(result, `${call}(result)`);
      return JSON.parse(JSON.stringify(result)) as unknown;
    };
  }
  return host as unknown as AgentHost;
}

/** Throws unless `value` survives a JSON round trip unchanged (undefined object fields are dropped, as optional fields). */
export function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is ${value}: not JSON`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (v === undefined) throw new TypeError(`${path}[${i}] is undefined: not JSON`);
      assertJson(v, `${path}[${i}]`);
    });
    return;
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path} is a ${(value as object).constructor?.name ?? "non-plain object"}: not JSON`);
    for (const [k, v] of Object.entries(value)) if (v !== undefined) assertJson(v, `${path}.${k}`);
    return;
  }
  throw new TypeError(`${path} is a ${typeof value}: not JSON`);
}
