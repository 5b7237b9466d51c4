import { createHash } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stepCountIs, streamText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMockModel } from "../models/mock";
import { tempWorkspace, testContext, toolRunner } from "../testing/tool-context";
import { buildTools } from "./tools";

let cwd: string;
beforeAll(() => {
  cwd = tempWorkspace("yard-buildtools-");
  writeFileSync(join(cwd, "notes.txt"), "These are the notes. Line two.\n");
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("buildTools", () => {
  it("offers only the listed tools, under their canonical names", () => {
    const { tools, warnings } = buildTools(["read", "grep", "glob", "list_directory"], testContext(cwd));
    expect(Object.keys(tools)).toEqual(["read_file", "search_files", "glob", "list_directory"]);
    expect(warnings).toEqual([]);
    expect(Object.keys(buildTools([], testContext(cwd)).tools)).toEqual([]);
  });

  it("every implemented built-in tool can be built", () => {
    const names = ["read_file", "write_file", "create_file", "edit_file", "delete_file", "move_file", "list_directory", "glob", "search_files", "run_command", "ask_question"];
    const { tools, warnings } = buildTools(names, testContext(cwd));
    expect(Object.keys(tools).sort()).toEqual([...names].sort());
    expect(warnings).toEqual([]);
  });

  it("todo, apply_patch and webfetch are left out with a warning, as are unknown names", () => {
    const { tools, warnings } = buildTools(["todo", "read_file", "apply_patch", "webfetch", "teleport", "read"], testContext(cwd));
    expect(Object.keys(tools)).toEqual(["read_file"]);
    expect(warnings).toEqual([
      'tool "todo" is not implemented yet; agent "tester" runs without it',
      'tool "apply_patch" is not implemented yet; agent "tester" runs without it',
      'tool "webfetch" is not implemented yet; agent "tester" runs without it',
      expect.stringMatching(/^unknown tool "teleport" ignored for agent "tester" \(known: read_file, /),
    ]);
  });
});

describe("ask_question", () => {
  it("announces the call, then asks the human and returns the answer", async () => {
    const ctx = testContext(cwd, { reply: "Use tabs." });
    const out = await toolRunner(ctx, ["ask_question"])("ask_question", { question: "Tabs or spaces?" });
    expect(out).toBe("Use tabs.");
    expect(ctx.recorded.events).toMatchObject([
      { kind: "tool-call", call: { toolName: "ask_question", args: '{"question":"Tabs or spaces?"}' } },
      { kind: "question", request: { toolName: "ask_question", question: "Tabs or spaces?" } },
    ]);
  });
});

describe("with a model", () => {
  it("mock/demo calls read_file in a tool loop and echoes its output, as in the reference recording", async () => {
    const ctx = testContext(cwd);
    const { tools } = buildTools(["read_file", "list_directory"], ctx);
    const result = streamText({
      model: createMockModel("demo"),
      system: 'You explore files. USE_TOOL[read_file]{"path":"notes.txt"}',
      prompt: "What is in notes.txt?",
      tools,
      stopWhen: stepCountIs(5),
    });
    const parts: Array<{ type: string; output?: unknown }> = [];
    for await (const part of result.fullStream) if (part.type === "tool-result") parts.push(part);
    const digest = createHash("sha256").update("These are the notes. Line two.\n").digest("hex");
    const output = `Read notes.txt — lines 1-2 of 2, 31 bytes, sha256=${digest}\n\nThese are the notes. Line two.\n`;
    expect(parts.map((p) => p.output)).toEqual([output]);
    expect(await result.text).toBe(`Tool finished: ${output.slice(0, 200).trim()}`);
    expect(ctx.recorded.events).toMatchObject([{ kind: "tool-call", call: { toolName: "read_file", args: '{"path":"notes.txt"}' } }]);
  });
});
