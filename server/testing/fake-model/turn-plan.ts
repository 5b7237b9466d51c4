import { chunkText, DEFAULT_CHUNK_SIZE, SCRIPT_INPUT_TOKENS, TOOL_TURN_OUTPUT_TOKENS } from "./script";
import type { FakeReply, FakeReplyInput, FakeStopReason, FakeStreamError, FakeTurn } from "./types";

/** A turn resolved into exactly what gets written, whatever the wire format. */

const ARGS_CHUNK_SIZE = 16;

export type PlannedToolCall = { id?: string; namespace?: string; name: string; input: unknown; argsJson: string; argsChunks: string[] };

export type PlannedTurn = {
  thinking: string[];
  deltas: string[];
  text: string;
  thinkingText: string;
  toolCalls: PlannedToolCall[];
  inputTokens: number;
  outputTokens: number;
  stopReason: FakeStopReason;
  delayMs: number;
  hang: boolean;
  streamError?: FakeStreamError;
};

export function toReply(input: FakeReplyInput): FakeReply {
  return typeof input === "string" ? { kind: "turn", text: input } : input;
}

function textDeltas(turn: FakeTurn): string[] {
  if (turn.deltas) return turn.deltas;
  return chunkText(turn.text ?? "", turn.chunkSize ?? DEFAULT_CHUNK_SIZE);
}

function planToolCall(call: { id?: string; namespace?: string; name: string; input: unknown }): PlannedToolCall {
  const argsJson = JSON.stringify(call.input ?? {});
  return { ...call, argsJson, argsChunks: chunkText(argsJson, ARGS_CHUNK_SIZE) };
}

export function planTurn(turn: FakeTurn): PlannedTurn {
  const deltas = textDeltas(turn);
  const thinking = typeof turn.thinking === "string" ? [turn.thinking] : (turn.thinking ?? []);
  const toolCalls = (turn.toolCalls ?? []).map(planToolCall);
  const defaultOutput = toolCalls.length > 0 ? TOOL_TURN_OUTPUT_TOKENS : Math.max(5, deltas.length + thinking.length);
  return {
    thinking,
    deltas,
    text: deltas.join(""),
    thinkingText: thinking.join(""),
    toolCalls,
    inputTokens: turn.usage?.inputTokens ?? SCRIPT_INPUT_TOKENS,
    outputTokens: turn.usage?.outputTokens ?? defaultOutput,
    stopReason: turn.stopReason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    delayMs: turn.delayMs ?? 0,
    hang: turn.hang ?? false,
    streamError: turn.streamError,
  };
}
