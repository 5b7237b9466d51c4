import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonMessage } from "../../shared/comma";
import { CommaClient } from "../testing/comma-client";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { fieldMutations, frameDiff, mergeText, Normalizer, type GoldenLine, type WireFrame } from "../testing/golden-replay";
import { removeHome, startTestServer, type TestServer } from "../testing/server-harness";

/**
 * Replays the client frames recorded from the Comma reference daemon against our /ws, with the
 * fake model scripted the same way, and compares what comes back, normalized as the recordings
 * are: frame types, their order, every field present and absent and every value (frameDiff lists
 * the few values that are the reference's own). Two sets: the shared three
 * (../shared/reference/comma-golden) and ours (server/testing/golden: continuation, broadcast,
 * cycle, palette, permissions, commands, stop). Each file runs on a fresh server.
 */
const SETS = [
  resolve(import.meta.dirname, "..", "..", "..", "shared", "reference", "comma-golden"),
  resolve(import.meta.dirname, "..", "testing", "golden"),
].filter(existsSync);
const files = SETS.flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith(".jsonl")).map((f) => ({ dir, file: f })));
const linesOf = (dir: string, file: string) => readFileSync(join(dir, file), "utf8").trim().split("\n").map((l) => JSON.parse(l) as GoldenLine);

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(async () => {
  await fake?.close();
});

/**
 * A scenario's world, with paths as long as the recording's (`/root/ref-run/work` and
 * `/tmp/golden-XXXXXX` are both 18 characters): the fake model echoes tool outputs, and its token
 * counts follow the echo's length.
 */
function world(dir: string) {
  const root = mkdtempSync("/tmp/golden-");
  const cwd = join(root, "cwd");
  const strategies = join(root, "strategies");
  mkdirSync(cwd);
  mkdirSync(join(root, "outside"));
  mkdirSync(strategies);
  writeFileSync(join(cwd, "notes.txt"), "These are the notes. Line two.\n");
  mkdirSync(join(cwd, "sub"));
  writeFileSync(join(root, "outside", "secret.txt"), "top secret\n");
  for (const f of readdirSync(join(dir, "strategies"))) writeFileSync(join(strategies, f), readFileSync(join(dir, "strategies", f)));
  return { root, cwd, strategies };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(files.length === 0)("golden replay of the reference daemon's frames", () => {
  for (const { dir, file } of files) {
    it(`matches ${file}`, async () => {
      const w = world(dir);
      const t: TestServer = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "golden" } });
      try {
        await replay(t, w, linesOf(dir, file), file);
      } finally {
        await t.stop();
        removeHome(t.home);
        removeHome(w.root);
      }
    });
  }
});

async function replay(t: TestServer, w: { root: string; cwd: string; strategies: string }, lines: GoldenLine[], file: string): Promise<void> {
  const norm = new Normalizer([
    [w.strategies, "<STRATEGIES>"],
    [w.cwd, "<CWD>"],
    [w.root, "<ROOT>"],
    [t.url, "<URL>"],
  ]);
  const conns = new Map<string, CommaClient>();
  const consumed = new Map<string, number>();
  const substitute = (v: unknown): unknown =>
    JSON.parse(
      JSON.stringify(v)
        .replaceAll("<STRATEGIES>", w.strategies)
        .replaceAll("<CWD>", w.cwd)
        .replaceAll("<ROOT>", w.root)
        .replace(/<uuid:\d+>/g, (tok) => norm.real(tok) ?? tok),
    );
  /** The frames of a connection not compared yet, with text events merged as the recording. */
  const pending = (conn: string) => mergeText(conns.get(conn)!.frames.slice(consumed.get(conn) ?? 0) as WireFrame[]);

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
    conns.get(line.conn)!.send(line.raw !== undefined && typeof line.msg !== "object" ? line.raw : (line.raw ?? (substitute(line.msg) as Record<string, unknown>)));
    // what the reference sent, on every connection, before the next client frame (in its order)
    const expected: GoldenLine[] = [];
    for (let j = i + 1; j < lines.length && lines[j]!.dir !== "out"; j++) if (lines[j]!.dir === "in") expected.push(lines[j]!);
    const want = new Map<string, number>();
    for (const l of expected) want.set(l.conn, (want.get(l.conn) ?? 0) + 1);
    const deadline = Date.now() + 15_000;
    // a stop races the stream it stops: text the run streamed before the stop reached it may still be on its way
    // (the reference's recording caught none; a loaded machine can). Only such text, and only after a stop, is passed over.
    if ((line.msg as { type?: string } | undefined)?.type === "stop_run") {
      const c = conns.get(line.conn)!;
      const isText = (f: unknown) => (f as WireFrame).type === "agent_streaming" && ((f as WireFrame).event as { type?: string }).type === "text";
      for (;;) {
        let at = consumed.get(line.conn) ?? 0;
        while (at < c.frames.length && isText(c.frames[at])) at++;
        consumed.set(line.conn, at);
        if (at < c.frames.length || Date.now() > deadline) break;
        await sleep(20);
      }
    }
    while (Date.now() < deadline && [...want].some(([conn, n]) => pending(conn).length < n)) await sleep(20);
    if (expected.length === 0) await sleep(400);
    const where = `${file}: after ${JSON.stringify(line.msg ?? line.raw)}`;
    for (const [conn] of conns) {
      const got = pending(conn).slice(0, Math.max(want.get(conn) ?? 0, expected.length === 0 ? pending(conn).length : 0));
      expect(got.map((f) => f.type), `${where} on ${conn}`).toEqual(expected.filter((l) => l.conn === conn).map((l) => (l.msg as WireFrame).type));
    }
    // compare in the recording's order, so ids are numbered in the same order of first appearance
    const taken = new Map<string, number>();
    for (const l of expected) {
      const k = taken.get(l.conn) ?? 0;
      taken.set(l.conn, k + 1);
      const raw = pending(l.conn)[k]!;
      expect(DaemonMessage.safeParse(raw).error?.issues, `${where}: ${raw.type} against the wire schema`).toBeUndefined();
      const actual = norm.value(raw) as WireFrame;
      expect(frameDiff(actual, l.msg as WireFrame, `${raw.type}`), `${where} on ${l.conn}`).toEqual([]);
    }
    // advance each connection past the frames compared (merged text events count as their parts)
    for (const [conn, c] of conns) {
      const n = taken.get(conn) ?? 0;
      let at = consumed.get(conn) ?? 0;
      for (let merged = 0; merged < n && at < c.frames.length; ) {
        const f = c.frames[at] as WireFrame;
        const next = c.frames[at + 1] as WireFrame | undefined;
        at++;
        const isText = (x?: WireFrame) => x?.type === "agent_streaming" && (x.event as { type?: string }).type === "text";
        if (isText(f) && isText(next) && next!.agentName === f.agentName) continue;
        merged++;
      }
      consumed.set(conn, at);
    }
  }
  await sleep(300);
  for (const [conn, c] of conns) expect(c.frames.slice(consumed.get(conn) ?? 0).map((f) => f.type), `${file}: frames on ${conn} after the last recorded one`).toEqual([]);
  for (const c of conns.values()) c.close();
}

describe("the golden comparison is strict", () => {
  it("every recorded frame matches itself, and fails with any field deleted or added, at any depth", () => {
    let checked = 0;
    for (const { dir, file } of files) {
      for (const line of linesOf(dir, file)) {
        if (line.dir !== "in") continue;
        const frame = line.msg as WireFrame;
        expect(frameDiff(frame, frame), `${file}: ${frame.type}`).toEqual([]);
        for (const m of fieldMutations(frame)) {
          expect(frameDiff(m.frame, frame).length, `${file}: ${frame.type} with ${m.what} must not match`).toBeGreaterThan(0);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it("a changed value fails too, except an error's wording and the daemon's own catalogue content", () => {
    const done = { type: "strategy_completed", runId: "<uuid:1>", result: "x", usage: { promptTokens: 1, completionTokens: 2 }, ts: "<ts>" };
    expect(frameDiff({ ...done, usage: { promptTokens: 1, completionTokens: 3 } }, done)).toEqual(["frame.usage.completionTokens: 3 where the recording has 2"]);
    const err = { type: "error", code: "HUB_ERROR", message: "offline", ts: "<ts>" };
    expect(frameDiff({ ...err, message: "no hub" }, err)).toEqual([]);
    expect(frameDiff({ ...err, code: "NOT_FOUND" }, err)).toHaveLength(1);
    const models = { type: "available_models", models: [{ id: "a", hasCredentials: false, providers: ["p"], configuredProviders: [] }], ts: "<ts>" };
    expect(frameDiff({ ...models, models: [{ id: "b", hasCredentials: true, providers: ["q"], configuredProviders: ["q"] }, { id: "c", hasCredentials: false, providers: [], configuredProviders: [] }] }, models)).toEqual([]);
    expect(frameDiff({ ...models, models: [{ id: 1, hasCredentials: true, providers: [], configuredProviders: [] }] }, models)).toHaveLength(1);
  });
});
