import { generateText, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { demoAnswer, judgeSignal, topicOf } from "./demo-text";
import { createMockModel } from "./mock";

async function deltasOf(result: { fullStream: AsyncIterable<{ type: string; text?: string }> }): Promise<{ deltas: string[]; times: number[] }> {
  const deltas: string[] = [];
  const times: number[] = [];
  for await (const part of result.fullStream) {
    if (part.type !== "text-delta") continue;
    deltas.push(part.text ?? "");
    times.push(performance.now());
  }
  return { deltas, times };
}

const readFile = tool({
  description: "Read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `contents of ${path}`,
});

describe("mock/echo", () => {
  it("streams the last user message back in chunks and reports usage", async () => {
    const result = streamText({ model: createMockModel("echo", { deltaDelayMs: 0 }), system: "ignored", prompt: "Please repeat this sentence." });
    const { deltas } = await deltasOf(result);
    expect(deltas).toEqual(["Please", " repea", "t this", " sente", "nce."]);
    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBe(7);
    expect(await result.finishReason).toBe("stop");
  });

  it("answers through generateText too", async () => {
    const result = await generateText({ model: createMockModel("echo"), messages: [{ role: "user", content: "one" }, { role: "assistant", content: "x" }, { role: "user", content: "two" }] });
    expect(result.text).toBe("two");
  });
});

describe("mock/demo prose", () => {
  const planner = "You are a planner. Break the request into three short steps.";

  it("streams a short deterministic answer shaped by the role, paced 15-30 ms", async () => {
    const run = () => streamText({ model: createMockModel("demo"), system: planner, prompt: "Plan a team offsite" });
    const first = run();
    const { deltas, times } = await deltasOf(first);
    const text = deltas.join("");
    expect(text).toMatch(/^Here is a three-step plan for \*\*Plan a team offsite\*\*:\n\n1\. /);
    expect(deltas.length).toBeGreaterThan(10);
    const elapsed = (times.at(-1) ?? 0) - (times[0] ?? 0);
    expect(elapsed).toBeGreaterThanOrEqual((deltas.length - 1) * 15);
    expect(await run().text).toBe(text);
    expect((await first.usage).outputTokens).toBe(Math.ceil(text.length / 4));
  });

  it("gives each example role a readable answer of 2-5 sentences", () => {
    const roles = [
      "You are an optimist. Name the strongest point of the plan in one sentence.",
      "You are a skeptic. Name the biggest risk of the plan in one sentence.",
      "You are a senior code reviewer. Read the analysis of the code and provide specific suggestions.",
      "You are a technical researcher. Keep it to 3-4 bullet points.",
      "You are a skilled writer. Write or revise content based on the given topic or feedback.",
      "You are a helpful assistant. Answer the user's question concisely.",
    ];
    const answers = roles.map((system) => demoAnswer({ system, input: "Ship the new onboarding flow" }));
    const inputs = ["a", "Launch the CLI", "Review this diff", "Why is the build slow?", "x".repeat(90)];
    for (const input of inputs) for (const system of roles) expect(demoAnswer({ system, input })).not.toContain("undefined");
    expect(answers[0]).toMatch(/^The strongest point:/);
    expect(answers[1]).toMatch(/^The biggest risk:/);
    expect(answers[2]).toMatch(/^\*\*Review\.\*\*/);
    expect(answers[3]).toMatch(/^\*\*Technical researcher: Ship the new onboarding flow\*\*\n\n- /);
    expect(answers[4]).toMatch(/^\*\*Draft: Ship the new onboarding flow\*\*/);
    expect(answers[5]).toContain("mock/demo");
    for (const answer of answers) {
      const sentences = answer.split(/[.!?](?:\s|$)/).filter((s) => s.trim().length > 0).length;
      expect(sentences).toBeGreaterThanOrEqual(1);
      expect(sentences).toBeLessThanOrEqual(6);
      expect(answer).not.toMatch(/\b(done|stop|end cycle|undefined)\b/i);
    }
  });

  it("a judge asks for one improvement, then approves with its signal on the first line", () => {
    const editor = "You are an editor. If the draft is good, answer ==DONE== on the first line. Otherwise give one concrete improvement.";
    expect(judgeSignal(editor)).toBe("==DONE==");
    const first = demoAnswer({ system: editor, input: "A draft about onboarding." });
    expect(first.split("\n")[0]).toBe("Not yet.");
    expect(first).toContain("Suggestion:");
    expect(demoAnswer({ system: editor, input: first }).split("\n")[0]).toBe("==DONE==");
    expect(judgeSignal("Reply APPROVED on the first line when done.")).toBe("APPROVED");
  });

  it("the topic is the first line of the input, plain and short", () => {
    expect(topicOf("\n# Build a *CLI*?\nmore")).toBe("Build a CLI");
    expect(topicOf("")).toBe("the request");
    expect(topicOf("x".repeat(200))).toHaveLength(80);
  });

  it("looks around with an offered exploration tool, then summarizes what it saw", async () => {
    const listDirectory = tool({ description: "List", inputSchema: z.object({ path: z.string() }), execute: async () => "a.txt\nsrc/" });
    const result = await generateText({
      model: createMockModel("demo", { deltaDelayMs: 0 }),
      system: "You are a helpful coding assistant.",
      prompt: "What is here?",
      tools: { list_directory: listDirectory },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["list_directory", { path: "." }]]);
    expect(result.text).toContain("I looked around with `list_directory`");
    expect(result.text).toContain("a.txt\nsrc/");
  });
});

describe("mock/demo script language", () => {
  it("follows SAY / CHUNK / LONG like the fake model server", async () => {
    const say = streamText({ model: createMockModel("demo"), system: "CHUNK[4]", prompt: "SAY[Draft from writer.]" });
    expect((await deltasOf(say)).deltas).toEqual(["Draf", "t fr", "om w", "rite", "r."]);
    expect((await say.usage).outputTokens).toBe(5);
    const long = streamText({ model: createMockModel("demo"), prompt: "LONG[12]" });
    expect((await deltasOf(long)).deltas).toHaveLength(12);
  });

  it("runs a tool loop with stepCountIs(3) and echoes the tool result", async () => {
    const result = await generateText({
      model: createMockModel("demo"),
      system: 'You explore files. USE_TOOL[read_file]{"path":"notes.txt"}',
      prompt: "What is in notes.txt?",
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.text).toBe("Calling read_file.");
    expect(result.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["read_file", { path: "notes.txt" }]]);
    expect(result.text).toBe("Tool finished: contents of notes.txt");
    expect(result.totalUsage.outputTokens).toBe(20 + 6);
  });

  it("streams the same tool loop", async () => {
    const result = streamText({
      model: createMockModel("demo"),
      system: 'USE_TOOL[read_file]{"path":"a.txt"}',
      prompt: "go",
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
    });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(types.filter((t) => t === "tool-call" || t === "tool-result" || t === "finish-step")).toEqual(["tool-call", "tool-result", "finish-step", "finish-step"]);
    expect(await result.text).toBe("Tool finished: contents of a.txt");
  });
});

describe("abort", () => {
  it.each<[string, () => LanguageModel, string]>([
    ["mock/echo", () => createMockModel("echo", { deltaDelayMs: 20 }), "x".repeat(600)],
    ["mock/demo", () => createMockModel("demo"), "You are a planner. Plan a long trip"],
  ])("%s stops streaming when the signal aborts", async (_name, model, prompt) => {
    const controller = new AbortController();
    const result = streamText({ model: model(), prompt, abortSignal: controller.signal, maxRetries: 0, onError: () => undefined });
    let seen = 0;
    const types: string[] = [];
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === "text-delta" && ++seen === 3) controller.abort();
    }
    expect(seen).toBe(3);
    expect(types).toContain("abort");
    expect(types).not.toContain("finish");
  });

  it("an already aborted call fails at once", async () => {
    const signal = AbortSignal.abort();
    await expect(generateText({ model: createMockModel("demo"), prompt: "hi", abortSignal: signal, maxRetries: 0 })).rejects.toThrow(/abort/i);
  });
});
