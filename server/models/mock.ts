import { randomUUID } from "node:crypto";
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { demoAnswer, demoToolSummary, wordDeltas } from "./demo-text";
import { estimateTokens, lastToolName, promptTokens, scriptInputFromCall } from "./prompt-input";
import { chunkText, hasDirectives, interpretScript, parseDirectives, type ScriptInput, type ScriptToolCall } from "./script";

/**
 * Mock models: real AI SDK language models (spec v3) that need no network and no API key.
 * - `mock/echo` answers the last user message, streamed in chunks.
 * - `mock/demo` answers a short deterministic text derived from the system prompt and input,
 *   paced so the dashboard visibly streams; when the prompt holds script directives (SAY, LONG,
 *   DELAY, CHUNK, USE_TOOL) it follows the script exactly as the fake model server does; when
 *   it is offered `list_directory` or `glob` it first looks around with one of them.
 * Both honour the abort signal between deltas.
 */

export const MOCK_MODEL_IDS = ["demo", "echo"] as const;
export type MockModelId = (typeof MOCK_MODEL_IDS)[number];

export type MockModelOptions = {
  /** Milliseconds between prose deltas (script DELAY always wins). Default: demo 20, echo 10. */
  deltaDelayMs?: number;
};

const DEFAULT_DELAY: Record<MockModelId, number> = { demo: 20, echo: 10 };
const ECHO_CHUNK = 6;
/** The demo's own look-around call when it is offered one of these tools (and no script). */
const EXPLORATION_CALLS: ScriptToolCall[] = [
  { name: "list_directory", input: { path: "." } },
  { name: "glob", input: { pattern: "*" } },
];

/** What one call answers, whatever the API (generate or stream). */
type Plan = {
  deltas: string[];
  toolCalls: ScriptToolCall[];
  delayMs: number;
  inputTokens: number;
  outputTokens: number;
};

export function isMockModelId(id: string): id is MockModelId {
  return (MOCK_MODEL_IDS as readonly string[]).includes(id);
}

function prosePlan(text: string, deltas: string[], delayMs: number, inputTokens: number): Plan {
  return { deltas, toolCalls: [], delayMs, inputTokens, outputTokens: estimateTokens(text.length) };
}

function demoPlan(input: ScriptInput, call: LanguageModelV3CallOptions, delayMs: number, inputTokens: number): Plan {
  if (hasDirectives(parseDirectives(`${input.system}\n${input.lastUserText}`))) {
    const turn = interpretScript(input);
    return {
      deltas: turn.deltas,
      toolCalls: turn.toolCalls ?? [],
      delayMs: turn.delayMs ?? 0,
      inputTokens: turn.usage.inputTokens,
      outputTokens: turn.usage.outputTokens,
    };
  }
  if (input.toolResult !== undefined) {
    const text = demoToolSummary(lastToolName(call.prompt) ?? "a tool", input.toolResult);
    return prosePlan(text, wordDeltas(text), delayMs, inputTokens);
  }
  const explore = EXPLORATION_CALLS.find((c) => input.offeredTools.includes(c.name));
  if (explore) {
    return { deltas: [`Let me look around first with \`${explore.name}\`.`], toolCalls: [explore], delayMs, inputTokens, outputTokens: 20 };
  }
  const text = demoAnswer({ system: input.system, input: input.lastUserText });
  return prosePlan(text, wordDeltas(text), delayMs, inputTokens);
}

function planFor(id: MockModelId, call: LanguageModelV3CallOptions, options: MockModelOptions): Plan {
  const input = scriptInputFromCall(call);
  const delayMs = options.deltaDelayMs ?? DEFAULT_DELAY[id];
  const inputTokens = promptTokens(call.prompt);
  if (id === "demo") return demoPlan(input, call, delayMs, inputTokens);
  const text = input.lastUserText;
  return prosePlan(text, chunkText(text, ECHO_CHUNK), delayMs, inputTokens);
}

function usageOf(plan: Plan): LanguageModelV3Usage {
  return {
    inputTokens: { total: plan.inputTokens, noCache: plan.inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: plan.outputTokens, text: plan.outputTokens, reasoning: 0 },
  };
}

function finishReasonOf(plan: Plan): LanguageModelV3FinishReason {
  return plan.toolCalls.length > 0 ? { unified: "tool-calls", raw: "tool_use" } : { unified: "stop", raw: "end_turn" };
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Resolves after ms, or rejects with the signal's reason once it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function toolCallParts(plan: Plan): Array<LanguageModelV3Content & { type: "tool-call" }> {
  return plan.toolCalls.map((call) => ({
    type: "tool-call",
    toolCallId: `call_mock_${randomUUID().slice(0, 12)}`,
    toolName: call.name,
    input: JSON.stringify(call.input ?? {}),
  }));
}

function streamPlan(plan: Plan, modelId: string, signal: AbortSignal | undefined): ReadableStream<LanguageModelV3StreamPart> {
  let cancelled = false;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async start(controller) {
      try {
        controller.enqueue({ type: "stream-start", warnings: [] });
        controller.enqueue({ type: "response-metadata", id: `mock_${randomUUID()}`, modelId, timestamp: new Date() });
        if (plan.deltas.length > 0) {
          controller.enqueue({ type: "text-start", id: "text-0" });
          for (const [i, delta] of plan.deltas.entries()) {
            await sleep(i === 0 ? 0 : plan.delayMs, signal);
            if (cancelled) return;
            controller.enqueue({ type: "text-delta", id: "text-0", delta });
          }
          controller.enqueue({ type: "text-end", id: "text-0" });
        }
        await sleep(0, signal);
        for (const part of toolCallParts(plan)) controller.enqueue(part);
        controller.enqueue({ type: "finish", usage: usageOf(plan), finishReason: finishReasonOf(plan) });
        controller.close();
      } catch (err) {
        if (!cancelled) controller.error(err);
      }
    },
    cancel() {
      cancelled = true;
    },
  });
}

/** Not streamed: no pacing, but an aborted call still fails as aborted. */
async function generatePlan(plan: Plan, signal: AbortSignal | undefined): Promise<LanguageModelV3GenerateResult> {
  await sleep(0, signal);
  const text = plan.deltas.join("");
  const content: LanguageModelV3Content[] = [...(text ? [{ type: "text" as const, text }] : []), ...toolCallParts(plan)];
  return { content, finishReason: finishReasonOf(plan), usage: usageOf(plan), warnings: [] };
}

/** A mock language model (`mock/demo` or `mock/echo`). */
export function createMockModel(id: MockModelId, options: MockModelOptions = {}): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "mock",
    modelId: id,
    supportedUrls: {},
    async doGenerate(call) {
      return generatePlan(planFor(id, call, options), call.abortSignal);
    },
    async doStream(call): Promise<LanguageModelV3StreamResult> {
      if (call.abortSignal?.aborted) throw abortError(call.abortSignal);
      return { stream: streamPlan(planFor(id, call, options), id, call.abortSignal) };
    },
  };
}
