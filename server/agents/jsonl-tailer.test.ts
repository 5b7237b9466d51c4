import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JsonlTailer } from "./jsonl-tailer";

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "tailer-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function collect(path: string, offset = 0) {
  const lines: string[] = [];
  const offsets: number[] = [];
  const tailer = new JsonlTailer({
    path,
    offset,
    pollMs: 20,
    onLines: (l, end) => {
      lines.push(...l);
      offsets.push(end);
    },
  });
  return { tailer, lines, offsets };
}

async function until(cond: () => boolean, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("JsonlTailer", () => {
  it("joins lines split across writes, mid-line and mid-UTF-8 character, and reports line-boundary offsets", async () => {
    const path = join(tmp(), "out.jsonl");
    const { tailer, lines, offsets } = collect(path);
    tailer.start(); // before the file exists
    const text = '{"a":"héllo wörld ✓"}\n{"b":2}\n';
    const bytes = Buffer.from(text);
    writeFileSync(path, bytes.subarray(0, 9)); // cuts inside "é"
    await new Promise((r) => setTimeout(r, 50));
    appendFileSync(path, bytes.subarray(9, 26));
    await new Promise((r) => setTimeout(r, 50));
    appendFileSync(path, bytes.subarray(26));
    await until(() => lines.length === 2);
    await tailer.stop();
    expect(lines).toEqual(['{"a":"héllo wörld ✓"}', '{"b":2}']);
    expect(offsets.at(-1)).toBe(bytes.length);
    expect(tailer.offset).toBe(bytes.length);
  });

  it("starts at an offset, strips \\r, and delivers a last line without newline only on a final flush", async () => {
    const path = join(tmp(), "out.jsonl");
    writeFileSync(path, "skip me\r\nline one\r\nno newline yet");
    const { tailer, lines } = collect(path, Buffer.byteLength("skip me\r\n"));
    tailer.start();
    await until(() => lines.length === 1);
    await tailer.flush();
    expect(lines).toEqual(["line one"]);
    await tailer.flush({ final: true });
    expect(lines).toEqual(["line one", "no newline yet"]);
    await tailer.stop();
  });

  it("handles a 30 MB line and 200,000 lines written while tailing, in order and complete", async () => {
    const path = join(tmp(), "out.jsonl");
    const { tailer, lines } = collect(path);
    tailer.start();
    const huge = "x".repeat(30 * 1024 * 1024);
    appendFileSync(path, `${huge}\n`);
    for (let b = 0; b < 20; b++) {
      let chunk = "";
      for (let i = b * 10_000; i < (b + 1) * 10_000; i++) chunk += `{"n":${i}}\n`;
      appendFileSync(path, chunk);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => lines.length === 200_001, 20_000);
    await tailer.stop();
    expect(lines[0]!.length).toBe(huge.length);
    expect(lines.slice(1).every((l, i) => l === `{"n":${i}}`)).toBe(true);
  });

  it("never overlaps a slow consumer, and stops delivering after stop()", async () => {
    const path = join(tmp(), "out.jsonl");
    let active = 0;
    let overlapped = false;
    const got: string[] = [];
    const tailer = new JsonlTailer({
      path,
      pollMs: 10,
      onLines: async (l) => {
        active++;
        if (active > 1) overlapped = true;
        await new Promise((r) => setTimeout(r, 30));
        got.push(...l);
        active--;
      },
    });
    tailer.start();
    for (let i = 0; i < 20; i++) {
      appendFileSync(path, `line ${i}\n`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => got.length === 20);
    expect(overlapped).toBe(false);
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`));
    await tailer.stop();
    appendFileSync(path, "after stop\n");
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(20);
  });

  it("never reads twice at once: flushes racing watch events deliver each line exactly once", async () => {
    const path = join(tmp(), "out.jsonl");
    const { tailer, lines } = collect(path);
    tailer.start();
    for (let i = 0; i < 300; i++) {
      appendFileSync(path, `line ${i}\n`);
      if (i % 3 === 0) await tailer.flush();
    }
    await tailer.flush({ final: true });
    await tailer.stop();
    expect(lines).toEqual(Array.from({ length: 300 }, (_, i) => `line ${i}`));
  });
});
