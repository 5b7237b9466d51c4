import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { pullChunks } from "./body-reader";
import { FLUSH_PKT, PktLineError, pktLine } from "./pkt-line";
import { defaultRefusal, readPushCommands, type RefUpdate } from "./push-commands";

const A = "a".repeat(40);
const B = "b".repeat(40);
const ZERO = "0".repeat(40);

function body(...parts: Buffer[]): Buffer {
  return Buffer.concat(parts);
}

/** The body as a stream of `size`-byte chunks. */
function chunked(data: Buffer, size: number): AsyncIterator<Buffer> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) chunks.push(data.subarray(at, at + size));
  return pullChunks(Readable.from(chunks, { objectMode: false }));
}

describe("readPushCommands", () => {
  const request = body(
    pktLine(`${A} ${B} refs/heads/switchyard/foo\0report-status side-band-64k object-format=sha1 agent=git/2.39\n`),
    pktLine(`${B} ${ZERO} refs/heads/switchyard/old\n`),
    FLUSH_PKT,
    Buffer.from("PACK\0\0\0\x02rest-of-the-pack", "latin1"),
  );

  it.each([1, 3, 7, 64, 100_000])("reads the updates and capabilities from %i-byte chunks", async (size) => {
    const commands = await readPushCommands(chunked(request, size));
    expect(commands.updates).toEqual<RefUpdate[]>([
      { oldOid: A, newOid: B, refName: "refs/heads/switchyard/foo" },
      { oldOid: B, newOid: ZERO, refName: "refs/heads/switchyard/old" },
    ]);
    expect(commands.capabilities).toEqual(["report-status", "side-band-64k", "object-format=sha1", "agent=git/2.39"]);
    // what it read is a prefix of the body, at least up to the flush-pkt: replaying it loses nothing
    expect(request.subarray(0, commands.prefix.length).equals(commands.prefix)).toBe(true);
    expect(commands.prefix.length).toBeGreaterThanOrEqual(request.indexOf("0000PACK", 0, "latin1") + 4);
  });

  it("answers before the body has ended: the pack behind the commands is not waited for", async () => {
    const stream = new PassThrough();
    stream.write(body(pktLine(`${A} ${B} refs/heads/switchyard/foo\0report-status\n`), FLUSH_PKT, Buffer.from("PACK")));
    const commands = await readPushCommands(pullChunks(stream));
    expect(commands.updates.map((u) => u.refName)).toEqual(["refs/heads/switchyard/foo"]);
    expect(stream.writableEnded).toBe(false);
    stream.end();
  });

  it("skips shallow lines and takes sha256 ids", async () => {
    const X = "c".repeat(64);
    const Y = "d".repeat(64);
    const commands = await readPushCommands(chunked(body(pktLine(`shallow ${A}\n`), pktLine(`${X} ${Y} refs/heads/switchyard/s\0report-status-v2\n`), FLUSH_PKT), 5));
    expect(commands.updates).toEqual([{ oldOid: X, newOid: Y, refName: "refs/heads/switchyard/s" }]);
    expect(commands.capabilities).toEqual(["report-status-v2"]);
  });

  it("an empty command list (git's probe before a large push) has no updates", async () => {
    const commands = await readPushCommands(chunked(FLUSH_PKT, 4));
    expect(commands.updates).toEqual([]);
  });

  it.each([
    ["a bad length", Buffer.from("zz12abc")],
    ["a line that is not a command", body(pktLine("hello world\n"), FLUSH_PKT)],
    ["a signed push", body(pktLine("push-cert\0report-status\n"), FLUSH_PKT)],
    ["a short object id", body(pktLine(`abc ${B} refs/heads/switchyard/x\n`), FLUSH_PKT)],
    ["a body cut off before the flush", pktLine(`${A} ${B} refs/heads/switchyard/x\n`)],
    ["a delim-pkt", Buffer.from("0001")],
  ])("refuses %s", async (_name, data) => {
    await expect(readPushCommands(chunked(data, 2))).rejects.toBeInstanceOf(PktLineError);
  });
});

describe("defaultRefusal", () => {
  it.each([
    [{ oldOid: ZERO, newOid: B, refName: "refs/heads/switchyard/foo" }, null],
    [{ oldOid: A, newOid: B, refName: "refs/heads/switchyard/a/b" }, null],
    [{ oldOid: A, newOid: ZERO, refName: "refs/heads/switchyard/foo" }, "deleting refs is not allowed here"],
    [{ oldOid: A, newOid: B, refName: "refs/heads/main" }, "only refs/heads/switchyard/* may be pushed"],
    [{ oldOid: A, newOid: B, refName: "refs/heads/switchyard/" }, "only refs/heads/switchyard/* may be pushed"],
    [{ oldOid: A, newOid: B, refName: "refs/tags/switchyard/foo" }, "only refs/heads/switchyard/* may be pushed"],
    [{ oldOid: A, newOid: B, refName: "refs/heads/switchyardx" }, "only refs/heads/switchyard/* may be pushed"],
    [{ oldOid: A, newOid: B, refName: "refs/heads/switchyard/../main" }, "not a valid branch name"],
    [{ oldOid: A, newOid: B, refName: "refs/heads/switchyard/x.lock" }, "not a valid branch name"],
  ])("%o -> %s", (update, expected) => {
    expect(defaultRefusal(update)).toBe(expected);
  });
});
