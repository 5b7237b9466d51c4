import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DomainError } from "../errors";
import { clip, errorInfo, page, preview, ToolFailure, toolError } from "./tool-kit";
import { SWITCHYARD_TOOLS } from "./tools";

describe("the tools' definitions", () => {
  it("every tool has a unique snake_case name, a description, and schemas that become JSON Schema", () => {
    const names = SWITCHYARD_TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of SWITCHYARD_TOOLS) {
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(tool.description.length, tool.name).toBeGreaterThan(30);
      expect(z.toJSONSchema(tool.input, { io: "input" }), tool.name).toMatchObject({ type: "object" });
      expect(z.toJSONSchema(tool.output, { io: "output" }), tool.name).toMatchObject({ type: "object" });
    }
  });
});

describe("tool errors", () => {
  it("keep a procedure's domain code and the fields bad input names", () => {
    const err = TRPCClientError.from({ error: { code: -32600, message: "runId: expected string", data: { code: "BAD_REQUEST", appCode: "VALIDATION_ERROR", issues: [{ path: "runId", message: "expected string" }] } } });
    expect(errorInfo(err)).toEqual({ code: "VALIDATION_ERROR", message: "runId: expected string", issues: [{ path: "runId", message: "expected string" }] });
    expect(toolError(err)).toMatchObject({ isError: true, content: [{ type: "text", text: "VALIDATION_ERROR: runId: expected string\n- runId: expected string" }] });
  });

  it("name the guard's refusal and an unreachable server", () => {
    const refused = TRPCClientError.from(new Error("Unable to transform response from server"), { meta: { response: { status: 401 }, responseJSON: { error: "UNAUTHORIZED", message: "Invalid token" } } });
    expect(errorInfo(refused)).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringContaining("Invalid token") });
    expect(errorInfo(TRPCClientError.from(new TypeError("fetch failed")))).toMatchObject({ code: "SERVER_UNREACHABLE" });
  });

  it("carry domain errors and the tools' own failures by code", () => {
    expect(errorInfo(new DomainError("AGENT_NOT_FOUND", "No agent x"))).toEqual({ code: "AGENT_NOT_FOUND", message: "No agent x" });
    expect(errorInfo(new ToolFailure("BAD_INPUT", "give one target"))).toEqual({ code: "BAD_INPUT", message: "give one target" });
    expect(errorInfo(new Error("boom"))).toEqual({ code: "INTERNAL_ERROR", message: "boom" });
  });
});

describe("small results", () => {
  it("clip, page and preview", () => {
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("abc", 4)).toBe("abc");
    expect(page("abcdefghij", 4, 4)).toEqual({ text: "efgh", offset: 4, totalChars: 10, nextOffset: 8 });
    expect(page("abcdefghij", 8, 4)).toEqual({ text: "ij", offset: 8, totalChars: 10, nextOffset: null });
    expect(preview({ a: 1 })).toEqual({ a: 1 });
    expect(preview("x".repeat(5000), 100)).toEqual({ truncated: expect.stringMatching(/^"x+…$/) });
  });
});
