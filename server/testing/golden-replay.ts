/**
 * Test support for the golden replays (`server/runs/golden.int.test.ts`): the recorded lines, the
 * normalization the recordings use, and the strict frame comparison.
 */

export type GoldenLine = {
  conn: string;
  dir: "out" | "in" | "meta";
  msg?: unknown;
  raw?: string;
  event?: string;
  request?: string;
  status?: number;
  body?: unknown;
  note?: string;
  chunks?: number;
};

export type WireFrame = { type: string; [k: string]: unknown };

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;

/** Normalize frames as the recordings are; ids numbered by first appearance within one scenario. */
export class Normalizer {
  private uuids = new Map<string, string>();
  private toolus = new Map<string, string>();
  /** `[real, token]` pairs, replaced longest first. */
  constructor(private readonly paths: Array<[string, string]>) {
    this.paths = [...paths].sort((a, b) => b[0].length - a[0].length);
  }

  value(v: unknown, key?: string): unknown {
    if (typeof v === "string") return this.str(v, key);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.value(x, k)]));
    if (typeof v === "number" && key === "uptime") return "<n>";
    return v;
  }

  private str(s: string, key?: string): string {
    if (key === "ts" || ISO_TIME.test(s)) return "<ts>";
    let out = s;
    for (const [real, token] of this.paths) out = out.split(real).join(token);
    out = out.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (u) => {
      if (!this.uuids.has(u)) this.uuids.set(u, `<uuid:${this.uuids.size + 1}>`);
      return this.uuids.get(u)!;
    });
    out = out.replace(/\b(?:toolu|call)_[A-Za-z0-9_]+\b/g, (u) => {
      if (!this.toolus.has(u)) this.toolus.set(u, `<toolu:${this.toolus.size + 1}>`);
      return this.toolus.get(u)!;
    });
    out = out.replace(/\(\d+ms\)/g, "(<n>ms)");
    return out.replace(/\b[0-9a-f]{64}\b/g, "<sha256>");
  }

  /** The real value behind a placeholder (to send frames that name a run or a request). */
  real(token: string): string | undefined {
    for (const [real, t] of this.uuids) if (t === token) return real;
    return undefined;
  }
}

/** Merge consecutive text stream events of one agent into one frame, as the recordings do. */
export function mergeText(frames: WireFrame[]): WireFrame[] {
  const out: WireFrame[] = [];
  for (const f of frames) {
    const prev = out.at(-1);
    const ev = f.event as { type?: string; text?: string } | undefined;
    const pev = prev?.event as { type?: string; text?: string } | undefined;
    if (f.type === "agent_streaming" && ev?.type === "text" && prev?.type === "agent_streaming" && pev?.type === "text" && prev.agentName === f.agentName) {
      prev.event = { ...pev, text: `${pev.text}${ev.text}` };
      continue;
    }
    out.push(structuredClone(f));
  }
  return out;
}

/**
 * Lists whose entries are the daemon's own content (the reference's model catalogue, its policy
 * chain): each entry we send must have exactly the fields of the recorded entry (recursively for
 * lists inside it), with values of the same kind; the number of entries and the values are ours.
 */
const CONTENT_LISTS: Record<string, string[]> = {
  available_models: ["models"],
  provider_list: ["providers"],
  policy_updated: ["policies"],
};

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

function sameShape(actual: unknown, expected: unknown, path: string, problems: string[]): void {
  if (kind(actual) !== kind(expected)) return void problems.push(`${path}: ${kind(actual)} where the recording has ${kind(expected)}`);
  if (Array.isArray(expected)) {
    const model = expected[0];
    if (model === undefined) return;
    (actual as unknown[]).forEach((item, i) => sameShape(item, model, `${path}[${i}]`, problems));
    return;
  }
  if (expected && typeof expected === "object") {
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    keysMatch(a, e, path, problems);
    for (const k of Object.keys(e)) if (k in a) sameShape(a[k], e[k], `${path}.${k}`, problems);
  }
}

function keysMatch(a: Record<string, unknown>, e: Record<string, unknown>, path: string, problems: string[]): void {
  const missing = Object.keys(e).filter((k) => !(k in a));
  const extra = Object.keys(a).filter((k) => !(k in e));
  if (missing.length) problems.push(`${path}: missing ${missing.join(", ")}`);
  if (extra.length) problems.push(`${path}: extra ${extra.join(", ")}`);
}

function sameValue(actual: unknown, expected: unknown, path: string, problems: string[]): void {
  if (kind(actual) !== kind(expected)) return void problems.push(`${path}: ${JSON.stringify(actual)} where the recording has ${JSON.stringify(expected)}`);
  if (Array.isArray(expected)) {
    const a = actual as unknown[];
    if (a.length !== expected.length) return void problems.push(`${path}: ${a.length} entries where the recording has ${expected.length}`);
    expected.forEach((e, i) => sameValue(a[i], e, `${path}[${i}]`, problems));
    return;
  }
  if (expected && typeof expected === "object") {
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    keysMatch(a, e, path, problems);
    for (const k of Object.keys(e)) if (k in a) sameValue(a[k], e[k], `${path}.${k}`, problems);
    return;
  }
  if (actual !== expected) problems.push(`${path}: ${JSON.stringify(actual)} where the recording has ${JSON.stringify(expected)}`);
}

/**
 * Every difference between a frame we sent and the recorded one (both normalized): the same
 * fields, present and absent, at every depth, and the same values, except an `error`'s message
 * (the reference's own wording) and the content lists above (shape only).
 */
export function frameDiff(actual: WireFrame, expected: WireFrame, where = "frame"): string[] {
  const problems: string[] = [];
  if (actual.type !== expected.type) return [`${where}: ${actual.type} where the recording has ${expected.type}`];
  keysMatch(actual, expected, where, problems);
  const content = CONTENT_LISTS[expected.type] ?? [];
  for (const key of Object.keys(expected)) {
    if (!(key in actual)) continue;
    const path = `${where}.${key}`;
    if (expected.type === "error" && key === "message") {
      if (typeof actual.message !== "string" || actual.message.length === 0) problems.push(`${path}: not a message`);
    } else if (content.includes(key)) sameShape(actual[key], expected[key], path, problems);
    else sameValue(actual[key], expected[key], path, problems);
  }
  return problems;
}

/** Each way of breaking a recorded frame by one field: every field deleted, a field added, at every depth. */
export function* fieldMutations(frame: WireFrame): Generator<{ what: string; frame: WireFrame }> {
  const paths: Array<Array<string | number>> = [];
  const walk = (v: unknown, path: Array<string | number>) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v && typeof v === "object") {
      paths.push(path);
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    }
  };
  walk(frame, []);
  for (const path of paths) {
    const at = (root: WireFrame) => path.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], root) as Record<string, unknown>;
    for (const key of Object.keys(at(frame))) {
      if (path.length === 0 && key === "type") continue;
      const deleted = structuredClone(frame);
      delete at(deleted)[key];
      yield { what: `delete ${[...path, key].join(".")}`, frame: deleted };
    }
    const added = structuredClone(frame);
    at(added).addedField = "x";
    yield { what: `add ${[...path, "addedField"].join(".")}`, frame: added };
  }
}
