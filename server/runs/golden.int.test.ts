import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommaClient, type Frame } from "../testing/comma-client";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

/**
 * Replays the client frames recorded from the Comma reference daemon (../shared/reference/
 * comma-golden) against our /ws, with the fake model scripted the same way, and compares what
 * comes back, normalized as that folder's README says. Frame types, their order, their fields and
 * error codes must match; zod wording, tool output text and text chunking need not.
 */
const GOLDEN = resolve(import.meta.dirname, "..", "..", "..", "shared", "reference", "comma-golden");
const files = existsSync(GOLDEN) ? readdirSync(GOLDEN).filter((f) => f.endsWith(".jsonl")) : [];

type Line = { conn: string; dir: "out" | "in" | "meta"; msg?: unknown; raw?: string; event?: string; request?: string; status?: number; body?: unknown; note?: string };

let fake: FakeModelServer;
let t: TestServer;
let strategies: string;
let cwd: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "golden" } });
  strategies = tempHome("golden-strategies-");
  cwd = tempHome("golden-cwd-");
  if (existsSync(join(GOLDEN, "strategies"))) for (const f of readdirSync(join(GOLDEN, "strategies"))) copyFileSync(join(GOLDEN, "strategies", f), join(strategies, f));
  writeFileSync(join(cwd, "notes.txt"), "These are the notes. Line two.\n");
  mkdirSync(join(cwd, "sub"), { recursive: true });
});

afterAll(async () => {
  await t?.stop();
  await fake?.close();
  removeHome(t.home);
  removeHome(strategies);
  removeHome(cwd);
});

/** Normalize a frame as the golden README does; ids numbered by first appearance per scenario. */
class Normalizer {
  private uuids = new Map<string, string>();
  private toolus = new Map<string, string>();
  constructor(private readonly paths: Array<[string, string]>) {}

  value(v: unknown, key?: string): unknown {
    if (typeof v === "string") return this.str(v, key);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.value(x, k)]));
    if (typeof v === "number" && key === "uptime") return "<n>";
    return v;
  }

  private str(s: string, key?: string): string {
    if (key === "ts") return "<ts>";
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
    return out.replace(/\b[0-9a-f]{64}\b/g, "<sha256>");
  }

  /** The real value behind a placeholder (to send frames that name a run). */
  real(token: string): string | undefined {
    for (const [real, t] of this.uuids) if (t === token) return real;
    return undefined;
  }
}

/** Merge consecutive text stream events of one agent, as the recording does. */
function mergeText(frames: Frame[]): Frame[] {
  const out: Frame[] = [];
  for (const f of frames) {
    const prev = out.at(-1);
    const ev = f.event as { type?: string; text?: string } | undefined;
    const pev = prev?.event as { type?: string; text?: string } | undefined;
    if (f.type === "agent_streaming" && ev?.type === "text" && prev?.type === "agent_streaming" && pev?.type === "text" && prev.agentName === f.agentName) {
      prev.event = { ...pev, text: `${pev.text}${ev.text}` };
      prev.chunks = ((prev.chunks as number | undefined) ?? 1) + 1;
      continue;
    }
    out.push({ ...f });
  }
  return out;
}

/** Compare one frame: same type, same fields, same values except where the README allows. */
function compare(actual: Frame, expected: Frame, where: string): void {
  expect(actual.type, where).toBe(expected.type);
  const lax = new Set(["chunks"]);
  const actualKeys = Object.keys(actual).filter((k) => !lax.has(k) && !(k === "requestId" && !("requestId" in expected)));
  const expectedKeys = Object.keys(expected).filter((k) => !lax.has(k));
  expect(actualKeys.sort(), `${where}: fields`).toEqual(expectedKeys.sort());
  for (const key of expectedKeys) {
    if (key === "message" && expected.type === "error") continue; // wording is the reference's own
    if (key === "contextUsage") continue;
    if (key === "result" && typeof expected.result === "string" && String(expected.result).startsWith("Tool finished:")) continue;
    if (key === "text" && typeof expected.text === "string" && String(expected.text).startsWith("Tool finished:")) continue;
    if (key === "event" && String((expected.event as { text?: string }).text ?? "").startsWith("Tool finished:")) {
      // the echo carries the tool's output text, which is the reference's own wording
      expect(String((actual.event as { text?: string }).text), `${where}: event.text`).toMatch(/^Tool finished: Read notes\.txt/);
      continue;
    }
    if (key === "event" && isToolOutput(expected.event)) {
      const { output: _o, ...rest } = expected.event as Record<string, unknown>;
      const { output: _a, ...got } = actual.event as Record<string, unknown>;
      expect(got, `${where}: event`).toEqual(rest);
      continue;
    }
    if (key === "event" && (expected.event as { type?: string }).type === "done") {
      const { result: er, ...rest } = expected.event as Record<string, unknown>;
      const { result: ar, ...got } = actual.event as Record<string, unknown>;
      expect(got, `${where}: event`).toEqual(rest);
      expect(Object.keys(ar as object).filter((k) => k !== "contextUsage").sort(), `${where}: done.result`).toEqual(Object.keys(er as object).filter((k) => k !== "contextUsage").sort());
      continue;
    }
    if (key === "result" && typeof expected.result === "object") {
      const { contextUsage: _c, text: et, ...rest } = expected.result as Record<string, unknown>;
      const { contextUsage: _d, text: at, ...got } = actual.result as Record<string, unknown>;
      expect(got, `${where}: result`).toEqual(rest);
      if (!String(et).startsWith("Tool finished:")) expect(at, `${where}: result.text`).toEqual(et);
      continue;
    }
    expect(actual[key], `${where}: ${key}`).toEqual(expected[key]);
  }
}

const isToolOutput = (e: unknown) => !!e && typeof e === "object" && (e as { type?: string }).type === "tool-result";

describe.skipIf(files.length === 0)("golden replay of the reference daemon's frames", () => {
  for (const file of files) {
    it(`matches ${file}`, async () => {
      const lines = readFileSync(join(GOLDEN, file), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Line);
      const norm = new Normalizer([
        [strategies, "<STRATEGIES>"],
        [cwd, "<CWD>"],
        [t.url, "<URL>"],
      ]);
      const conns = new Map<string, CommaClient>();
      const consumed = new Map<string, number>();
      const substitute = (v: unknown): unknown =>
        JSON.parse(
          JSON.stringify(v)
            .replaceAll("<STRATEGIES>", strategies)
            .replaceAll("<CWD>", cwd)
            .replace(/<uuid:\d+>/g, (tok) => norm.real(tok) ?? tok),
        );

      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (line.dir === "meta") {
          if (line.event === "open") conns.set(line.conn, await CommaClient.connect(t.url));
          if (line.event === "http") {
            const [method, path] = line.request!.split(" ");
            const res = await fetch(`${t.url}${path}`, { method });
            expect(res.status, line.request).toBe(line.status);
            const text = await res.text();
            const body = typeof line.body === "string" ? text : JSON.parse(text);
            expect(norm.value(body), line.request).toEqual(line.body);
          }
          continue;
        }
        if (line.dir !== "out") continue;
        const c = conns.get(line.conn)!;
        c.send(line.raw !== undefined && typeof line.msg !== "object" ? line.raw : line.raw ?? (substitute(line.msg) as Record<string, unknown>));
        // the frames the reference answered before the next client frame on this connection
        const expected: Frame[] = [];
        for (let j = i + 1; j < lines.length && !(lines[j]!.dir === "out"); j++) {
          const l = lines[j]!;
          if (l.dir === "in" && l.conn === line.conn) expected.push(l.msg as Frame);
        }
        const start = consumed.get(line.conn) ?? 0;
        const deadline = Date.now() + 15_000;
        const got = () => mergeText(c.frames.slice(start).map((f) => norm.value(f) as Frame));
        while (Date.now() < deadline && got().length < expected.length) await new Promise((r) => setTimeout(r, 20));
        if (expected.length === 0) await new Promise((r) => setTimeout(r, 400));
        const actual = got();
        expect(actual.map((f) => f.type), `${file}: after ${JSON.stringify(line.msg ?? line.raw)}`).toEqual(expected.map((f) => f.type));
        actual.forEach((f, k) => compare(f, expected[k]!, `${file} #${i} frame ${k} (${f.type})`));
        consumed.set(line.conn, c.frames.length);
      }
      for (const c of conns.values()) c.close();
    });
  }
});
