import { describe, expect, it } from "vitest";
import { PktReader } from "./pkt-line";
import { refusalReport } from "./report-status";

const A = "a".repeat(40);
const B = "b".repeat(40);
const updates = [
  { oldOid: A, newOid: B, refName: "refs/heads/main" },
  { oldOid: A, newOid: B, refName: "refs/heads/switchyard/ok" },
];
const refusal = { reasons: new Map([["refs/heads/main", "only refs/heads/switchyard/* may be pushed"]]), message: "Switchyard: no\nsecond line" };

/** Every pkt-line of `data` as text, "flush" for a flush-pkt. */
function lines(data: Buffer): (string | "flush")[] {
  const reader = new PktReader();
  reader.push(data);
  const out: (string | "flush")[] = [];
  for (let line = reader.next(); line !== null; line = reader.next()) out.push(line === "flush" ? "flush" : line.toString("latin1"));
  return out;
}

const report = ["unpack ok\n", "ng refs/heads/main only refs/heads/switchyard/* may be pushed\n", "ng refs/heads/switchyard/ok refused with the rest of this push\n", "flush"];

describe("refusalReport", () => {
  it("without side-band: the report-status lines themselves", () => {
    expect(lines(refusalReport(["report-status"], updates, refusal)!)).toEqual(report);
  });

  it("with side-band-64k: the message on channel 2, the report on channel 1, then a flush", () => {
    const out = lines(refusalReport(["report-status-v2", "side-band-64k"], updates, refusal)!);
    expect(out.slice(0, 2)).toEqual(["\x02Switchyard: no\n", "\x02second line\n"]);
    expect(out.at(-1)).toBe("flush");
    const band1 = out.slice(2, -1);
    expect(band1.every((line) => line.startsWith("\x01"))).toBe(true);
    expect(lines(Buffer.from(band1.map((line) => line.slice(1)).join(""), "latin1"))).toEqual(report);
  });

  it("with side-band (1000-byte packets): a long report is split over several packets", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ oldOid: A, newOid: B, refName: `refs/heads/other-${i}` }));
    const out = lines(refusalReport(["report-status", "side-band"], many, { reasons: new Map(), message: "" })!);
    expect(out.length).toBeGreaterThan(2);
    expect(out.slice(0, -1).every((line) => line.startsWith("\x01") && line.length <= 996)).toBe(true);
    expect(lines(Buffer.from(out.slice(0, -1).map((line) => line.slice(1)).join(""), "latin1"))).toHaveLength(42);
  });

  it("keeps a reason on one line", () => {
    const out = lines(refusalReport(["report-status"], updates.slice(0, 1), { reasons: new Map([["refs/heads/main", "a\nb\r\nc"]]), message: "" })!);
    expect(out[1]).toBe("ng refs/heads/main a b c\n");
  });

  it("is null when the client asked for no report", () => {
    expect(refusalReport(["side-band-64k", "quiet"], updates, refusal)).toBeNull();
  });
});
