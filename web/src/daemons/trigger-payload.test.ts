import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { describeDaemonError } from "./daemon-errors";
import { parsePayload, payloadPreview } from "./trigger-payload";

describe("parsePayload", () => {
  it("sends text as it is", () => {
    expect(parsePayload("hello world")).toEqual({ ok: true, value: "hello world" });
    expect(parsePayload("  42 items ")).toEqual({ ok: true, value: "  42 items " });
  });

  it("parses what starts with { or [ as JSON", () => {
    expect(parsePayload(' {"issue": 42, "tags": ["a"]} ')).toEqual({ ok: true, value: { issue: 42, tags: ["a"] } });
    expect(parsePayload("[1, 2]")).toEqual({ ok: true, value: [1, 2] });
  });

  it("refuses JSON that does not parse, with a message, and an empty payload", () => {
    const bad = parsePayload("{not json");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^Not valid JSON \(.+\)/);
    expect(parsePayload("[1, 2,")).toMatchObject({ ok: false });
    expect(parsePayload("   \n")).toMatchObject({ ok: false, error: expect.stringMatching(/Write a payload/) as unknown });
  });
});

describe("payloadPreview", () => {
  it("shows text as is and other values as compact JSON on one line, clipped", () => {
    expect(payloadPreview("a\n  b")).toBe("a b");
    expect(payloadPreview({ n: 2 })).toBe('{"n":2}');
    expect(payloadPreview(undefined)).toBe("undefined");
    expect(payloadPreview("x".repeat(50), 10)).toBe(`${"x".repeat(9)}…`);
  });
});

describe("describeDaemonError", () => {
  const err = (appCode: string, details: unknown) => new TRPCClientError("server text", { result: { error: { message: "server text", code: -32600, data: { appCode, details } } } });

  it("says what to do about a full queue or a daemon that is not running", () => {
    expect(describeDaemonError(err("DAEMON_QUEUE_FULL", { daemonId: "d", capacity: 1 }))).toEqual({ code: "DAEMON_QUEUE_FULL", message: expect.stringContaining("queue is full (capacity 1)") as unknown });
    expect(describeDaemonError(err("DAEMON_NOT_RUNNING", { daemonId: "d", status: "stopped" })).message).toBe("The daemon is stopped: resume it, then send the trigger again.");
  });

  it("keeps the server's message for other codes", () => {
    expect(describeDaemonError(err("DAEMON_PERSIST_FAILED", undefined))).toEqual({ code: "DAEMON_PERSIST_FAILED", message: "server text" });
  });

  it("gives no code for one outside shared/errors.ts (a newer server's), only the server's message", () => {
    expect(describeDaemonError(err("SOMETHING_ELSE", undefined))).toEqual({ message: "server text" });
  });
});
