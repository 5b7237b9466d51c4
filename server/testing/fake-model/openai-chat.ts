import type { WireContext } from "./response-writer";
import type { PlannedTurn } from "./turn-plan";
import type { FakeStopReason } from "./types";
import { openaiErrorBody } from "./http-errors";

/** OpenAI Chat Completions: `data:` chunks ending with `data: [DONE]`, or one JSON completion. */

const FINISH: Record<FakeStopReason, string> = { end_turn: "stop", tool_use: "tool_calls", max_tokens: "length" };

function usage(turn: PlannedTurn): Record<string, number> {
  return { prompt_tokens: turn.inputTokens, completion_tokens: turn.outputTokens, total_tokens: turn.inputTokens + turn.outputTokens };
}

function callIds(ctx: WireContext, turn: PlannedTurn): string[] {
  return turn.toolCalls.map((call) => call.id ?? ctx.newId("call_fake_"));
}

export async function streamChat(ctx: WireContext, turn: PlannedTurn, includeUsage: boolean): Promise<void> {
  const { w } = ctx;
  const shell = { id: ctx.newId("chatcmpl-fake-"), object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: ctx.model, system_fingerprint: "fp_fake" };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    ...shell,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  w.startSse();
  w.event(undefined, chunk({ role: "assistant", content: "", refusal: null }));
  for (const reasoning_content of turn.thinking) await w.delta(undefined, chunk({ reasoning_content }));
  for (const content of turn.deltas) await w.delta(undefined, chunk({ content }));
  if (turn.hang) await w.hang();
  if (turn.streamError) {
    w.event(undefined, openaiErrorBody(turn.streamError.type, turn.streamError.message));
    w.end();
    return;
  }
  const ids = callIds(ctx, turn);
  for (const [index, call] of turn.toolCalls.entries()) {
    const head = { index, id: ids[index], type: "function", function: { name: call.name, arguments: "" } };
    w.event(undefined, chunk({ tool_calls: [head] }));
    for (const args of call.argsChunks) await w.delta(undefined, chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
  }
  w.event(undefined, chunk({}, FINISH[turn.stopReason]));
  if (includeUsage) w.event(undefined, { ...shell, choices: [], usage: usage(turn) });
  w.event(undefined, "[DONE]");
  w.end();
}

/** The whole completion, for `stream: false`. */
export function chatCompletion(ctx: WireContext, turn: PlannedTurn): Record<string, unknown> {
  const ids = callIds(ctx, turn);
  const toolCalls = turn.toolCalls.map((call, i) => ({ id: ids[i], type: "function", function: { name: call.name, arguments: call.argsJson } }));
  const message: Record<string, unknown> = { role: "assistant", content: turn.deltas.length > 0 ? turn.text : toolCalls.length > 0 ? null : "", refusal: null };
  if (turn.thinking.length > 0) message.reasoning_content = turn.thinkingText;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: ctx.newId("chatcmpl-fake-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[turn.stopReason] }],
    usage: usage(turn),
  };
}
