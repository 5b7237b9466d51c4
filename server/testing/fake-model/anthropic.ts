import type { WireContext } from "./response-writer";
import type { PlannedToolCall, PlannedTurn } from "./turn-plan";
import { anthropicErrorBody } from "./http-errors";

/** Anthropic Messages API: SSE in the real order, or the whole message as JSON. */

const FAKE_SIGNATURE = "ZmFrZS1zaWduYXR1cmU=";

function usage(turn: PlannedTurn, outputTokens: number): Record<string, number> {
  return { input_tokens: turn.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens };
}

function toolId(ctx: WireContext, call: PlannedToolCall): string {
  return call.id ?? ctx.newId("toolu_fake_");
}

async function thinkingBlock(ctx: WireContext, turn: PlannedTurn, index: number): Promise<void> {
  const { w } = ctx;
  w.event("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
  for (const thinking of turn.thinking) {
    await w.delta("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } });
  }
  w.event("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: FAKE_SIGNATURE } });
  w.event("content_block_stop", { type: "content_block_stop", index });
}

async function toolUseBlock(ctx: WireContext, call: PlannedToolCall, index: number): Promise<void> {
  const { w } = ctx;
  const block = { type: "tool_use", id: toolId(ctx, call), name: call.name, input: {} };
  w.event("content_block_start", { type: "content_block_start", index, content_block: block });
  w.event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
  for (const partial_json of call.argsChunks) {
    await w.delta("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
  }
  w.event("content_block_stop", { type: "content_block_stop", index });
}

function messageShell(ctx: WireContext, id: string): Record<string, unknown> {
  return { id, type: "message", role: "assistant", model: ctx.model, content: [], stop_reason: null, stop_sequence: null };
}

export async function streamAnthropic(ctx: WireContext, turn: PlannedTurn): Promise<void> {
  const { w } = ctx;
  w.startSse({ "request-id": ctx.newId("req_fake_") });
  w.event("message_start", { type: "message_start", message: { ...messageShell(ctx, ctx.newId("msg_fake_")), usage: usage(turn, 1) } });
  w.event("ping", { type: "ping" });
  let index = 0;
  if (turn.thinking.length > 0) await thinkingBlock(ctx, turn, index++);
  const hasTextBlock = turn.deltas.length > 0 || turn.toolCalls.length === 0;
  if (hasTextBlock) {
    w.event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const text of turn.deltas) {
      await w.delta("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } });
    }
  }
  if (turn.hang) await w.hang();
  if (turn.streamError) {
    w.event("error", anthropicErrorBody(turn.streamError.type, turn.streamError.message));
    w.end();
    return;
  }
  if (hasTextBlock) w.event("content_block_stop", { type: "content_block_stop", index: index++ });
  for (const call of turn.toolCalls) await toolUseBlock(ctx, call, index++);
  w.event("message_delta", {
    type: "message_delta",
    delta: { stop_reason: turn.stopReason, stop_sequence: null },
    usage: usage(turn, turn.outputTokens),
  });
  w.event("message_stop", { type: "message_stop" });
  w.end();
}

/** The whole message, for `stream: false`. */
export function anthropicMessage(ctx: WireContext, turn: PlannedTurn): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (turn.thinking.length > 0) content.push({ type: "thinking", thinking: turn.thinkingText, signature: FAKE_SIGNATURE });
  if (turn.deltas.length > 0 || turn.toolCalls.length === 0) content.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls) content.push({ type: "tool_use", id: toolId(ctx, call), name: call.name, input: call.input ?? {} });
  return {
    ...messageShell(ctx, ctx.newId("msg_fake_")),
    content,
    stop_reason: turn.stopReason,
    usage: usage(turn, turn.outputTokens),
  };
}
