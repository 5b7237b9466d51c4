import type { RouterOutputs } from "../trpc";
import { subscribeToPath } from "../router/history";

/**
 * The agent page's first data, asked by index.html's inline script as the document is parsed:
 * the agent (`agents.get`) and its log's last lines (`agents.output`, HEAD_LINES), the requests
 * the page makes as it mounts, made while the app's JS is still loading. The page takes them
 * from here when the browser opened it (an agent's URL): they belong to that load only, and are
 * dropped at the first navigation inside the app. An answer that is not data (an error, a
 * network failure) is as if nothing were preloaded: the page asks again, through the tRPC client.
 */

type Outputs = { agent: RouterOutputs["agents"]["get"]; log: RouterOutputs["agents"]["output"] };
type Kind = keyof Outputs;

/** What the inline script leaves: the response's JSON body, `value` once it has arrived. */
type Slot = { promise: Promise<unknown>; value?: unknown; done?: boolean; settled?: Promise<void> };
export type Preload = { agentId: string } & Record<Kind, Slot>;

declare global {
  interface Window {
    __switchyardPreload?: Preload;
  }
}

let taken = false;
let preload: Preload | undefined;

function current(): Preload | undefined {
  if (taken) return preload;
  taken = true;
  if (typeof window === "undefined") return undefined;
  preload = window.__switchyardPreload;
  delete window.__switchyardPreload;
  if (preload) {
    // settled either way (a network failure leaves no value)
    for (const slot of [preload.agent, preload.log]) {
      const settle = () => void (slot.done = true);
      if (slot && !("value" in slot)) slot.promise.then(settle, settle);
      else if (slot) slot.done = true;
    }
    const off = subscribeToPath(() => {
      preload = undefined;
      off();
    });
  }
  return preload;
}

/** The data of a tRPC answer (`{ result: { data } }`, no transformer), else undefined. */
function dataOf(body: unknown): unknown {
  if (typeof body !== "object" || body === null || !("result" in body)) return undefined;
  const result = (body as { result: unknown }).result;
  return typeof result === "object" && result !== null && "data" in result ? (result as { data: unknown }).data : undefined;
}

function slotOf(kind: Kind, agentId: string): Slot | undefined {
  const p = current();
  return p?.agentId === agentId ? p[kind] : undefined;
}

/** The preloaded answer if it has arrived with data; undefined otherwise (not asked, not yet, an error). */
export function preloaded<K extends Kind>(kind: K, agentId: string): Outputs[K] | undefined {
  // the JSON the tRPC client would have parsed from the same request
  return dataOf(slotOf(kind, agentId)?.value) as Outputs[K] | undefined;
}

/** The tRPC error of an answer (`{ error: { data: { code, httpStatus, appCode } } }`): was it "not found"? */
function notFoundOf(body: unknown): boolean {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const data = ((body as { error: { data?: { code?: unknown; httpStatus?: unknown; appCode?: unknown } } }).error ?? {}).data ?? {};
  return data.code === "NOT_FOUND" || data.httpStatus === 404 || (typeof data.appCode === "string" && /_NOT_FOUND$/.test(data.appCode));
}

/**
 * Where the preloaded answer is: none asked for this agent; still on its way; arrived with data;
 * arrived saying there is no such agent (no need to ask again); or arrived as another error (ask again).
 */
export type PreloadState<K extends Kind> = { state: "none" } | { state: "pending"; settled: Promise<unknown> } | { state: "data"; data: Outputs[K] } | { state: "not_found" } | { state: "failed" };

export function preloadState<K extends Kind>(kind: K, agentId: string): PreloadState<K> {
  const slot = slotOf(kind, agentId);
  if (!slot) return { state: "none" };
  if (!("value" in slot)) return slot.done ? { state: "failed" } : { state: "pending", settled: (slot.settled ??= slot.promise.then(() => undefined, () => undefined)) };
  const data = dataOf(slot.value);
  if (data !== undefined) return { state: "data", data: data as Outputs[K] };
  return notFoundOf(slot.value) ? { state: "not_found" } : { state: "failed" };
}

/** The preloaded answer once it arrives; undefined when there is none or it is not data. */
export async function awaitPreloaded<K extends Kind>(kind: K, agentId: string): Promise<Outputs[K] | undefined> {
  const slot = slotOf(kind, agentId);
  if (!slot) return undefined;
  try {
    return dataOf(await slot.promise) as Outputs[K] | undefined;
  } catch {
    return undefined;
  }
}

// taken as the app loads: a navigation before the page asks drops it too
current();

/** For tests: read window.__switchyardPreload again. */
export function resetPreloadForTests(): void {
  taken = false;
  preload = undefined;
}
