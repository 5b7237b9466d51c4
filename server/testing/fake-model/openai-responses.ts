import type { WireContext } from "./response-writer";
import type { PlannedToolCall, PlannedTurn } from "./turn-plan";
import { errorMessage } from "./http-errors";

/** OpenAI Responses API (what `codex exec` speaks): named SSE events, or one JSON response. */

type Item = Record<string, unknown>;

function usage(turn: PlannedTurn): Record<string, unknown> {
  return {
    input_tokens: turn.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: turn.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: turn.inputTokens + turn.outputTokens,
  };
}

function responseShell(ctx: WireContext, id: string, createdAt: number): Record<string, unknown> {
  return { id, object: "response", created_at: createdAt, model: ctx.model, status: "in_progress", error: null, incomplete_details: null, output: [], usage: null };
}

const textPart = (text: string): Item => ({ type: "output_text", text, annotations: [] });

const reasoningItem = (id: string, text: string): Item => ({ id, type: "reasoning", summary: text ? [{ type: "summary_text", text }] : [] });

const messageItem = (id: string, status: string, text?: string): Item =>
  ({ id, type: "message", status, role: "assistant", content: text === undefined ? [] : [textPart(text)] });

const callItem = (ctx: WireContext, call: PlannedToolCall): Item => ({
  id: ctx.newId("fc_fake_"), type: "function_call", status: "completed", call_id: call.id ?? ctx.newId("call_fake_"),
  ...(call.namespace ? { namespace: call.namespace } : {}), name: call.name, arguments: call.argsJson,
});

/** The final state of the response: status, output items, usage. */
function finalResponse(ctx: WireContext, turn: PlannedTurn, shell: Record<string, unknown>, output: Item[]): Record<string, unknown> {
  const incomplete = turn.stopReason === "max_tokens";
  return {
    ...shell,
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output,
    usage: usage(turn),
  };
}

class ResponsesStream {
  private seq = 0;
  readonly output: Item[] = [];
  constructor(readonly ctx: WireContext) {}

  send(type: string, data: Record<string, unknown>): void {
    this.ctx.w.event(type, { type, sequence_number: this.seq++, ...data });
  }

  async sendDelta(type: string, data: Record<string, unknown>): Promise<void> {
    await this.ctx.w.delta(type, { type, sequence_number: this.seq++, ...data });
  }

  async reasoning(turn: PlannedTurn): Promise<void> {
    const id = this.ctx.newId("rs_fake_");
    const output_index = this.output.length;
    this.send("response.output_item.added", { output_index, item: reasoningItem(id, "") });
    this.send("response.reasoning_summary_part.added", { item_id: id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
    for (const delta of turn.thinking) {
      await this.sendDelta("response.reasoning_summary_text.delta", { item_id: id, output_index, summary_index: 0, delta });
    }
    this.send("response.reasoning_summary_text.done", { item_id: id, output_index, summary_index: 0, text: turn.thinkingText });
    this.send("response.reasoning_summary_part.done", { item_id: id, output_index, summary_index: 0, part: { type: "summary_text", text: turn.thinkingText } });
    this.output.push(reasoningItem(id, turn.thinkingText));
    this.send("response.output_item.done", { output_index, item: this.output[output_index] });
  }

  /** Opens the message item and streams the text; returns its id and index for `closeMessage`. */
  async message(turn: PlannedTurn): Promise<{ id: string; output_index: number }> {
    const id = this.ctx.newId("msg_fake_");
    const output_index = this.output.length;
    this.send("response.output_item.added", { output_index, item: messageItem(id, "in_progress") });
    this.send("response.content_part.added", { item_id: id, output_index, content_index: 0, part: textPart("") });
    for (const delta of turn.deltas) {
      await this.sendDelta("response.output_text.delta", { item_id: id, output_index, content_index: 0, delta, logprobs: [] });
    }
    return { id, output_index };
  }

  closeMessage(turn: PlannedTurn, { id, output_index }: { id: string; output_index: number }): void {
    this.send("response.output_text.done", { item_id: id, output_index, content_index: 0, text: turn.text, logprobs: [] });
    this.send("response.content_part.done", { item_id: id, output_index, content_index: 0, part: textPart(turn.text) });
    this.output.push(messageItem(id, "completed", turn.text));
    this.send("response.output_item.done", { output_index, item: this.output[output_index] });
  }

  async functionCall(call: PlannedToolCall): Promise<void> {
    const item = callItem(this.ctx, call);
    const output_index = this.output.length;
    const item_id = item.id;
    this.send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
    for (const delta of call.argsChunks) {
      await this.sendDelta("response.function_call_arguments.delta", { item_id, output_index, delta });
    }
    this.send("response.function_call_arguments.done", { item_id, output_index, name: call.name, arguments: call.argsJson });
    this.output.push(item);
    this.send("response.output_item.done", { output_index, item });
  }
}

function sendStreamError(stream: ResponsesStream, turn: PlannedTurn, shell: Record<string, unknown>): void {
  const error = turn.streamError;
  if (!error) return;
  const message = errorMessage(error.type, error.message);
  if (error.responsesEvent === "error") {
    stream.send("error", { code: error.type, message, param: null });
    return;
  }
  stream.send("response.failed", { response: { ...shell, status: "failed", error: { code: error.type, message }, output: stream.output } });
}

export async function streamResponses(ctx: WireContext, turn: PlannedTurn): Promise<void> {
  const stream = new ResponsesStream(ctx);
  const shell = responseShell(ctx, ctx.newId("resp_fake_"), Math.floor(Date.now() / 1000));
  ctx.w.startSse({ "x-request-id": ctx.newId("req_fake_") });
  stream.send("response.created", { response: shell });
  stream.send("response.in_progress", { response: shell });
  if (turn.thinking.length > 0) await stream.reasoning(turn);
  const hasMessage = turn.deltas.length > 0 || turn.toolCalls.length === 0;
  const message = hasMessage ? await stream.message(turn) : undefined;
  if (turn.hang) await ctx.w.hang();
  if (turn.streamError) {
    sendStreamError(stream, turn, shell);
    ctx.w.end();
    return;
  }
  if (message) stream.closeMessage(turn, message);
  for (const call of turn.toolCalls) await stream.functionCall(call);
  const final = finalResponse(ctx, turn, shell, stream.output);
  stream.send(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  ctx.w.end();
}

/** The whole response, for `stream: false`. */
export function responsesResponse(ctx: WireContext, turn: PlannedTurn): Record<string, unknown> {
  const output: Item[] = [];
  if (turn.thinking.length > 0) output.push(reasoningItem(ctx.newId("rs_fake_"), turn.thinkingText));
  if (turn.deltas.length > 0 || turn.toolCalls.length === 0) output.push(messageItem(ctx.newId("msg_fake_"), "completed", turn.text));
  for (const call of turn.toolCalls) output.push(callItem(ctx, call));
  const shell = responseShell(ctx, ctx.newId("resp_fake_"), Math.floor(Date.now() / 1000));
  return finalResponse(ctx, turn, shell, output);
}
