import { anthropicMessage, streamAnthropic } from "./anthropic";
import { httpErrorResponse, streamErrorAsHttp } from "./http-errors";
import { chatCompletion, streamChat } from "./openai-chat";
import { responsesResponse, streamResponses } from "./openai-responses";
import type { WireContext } from "./response-writer";
import { planTurn, type PlannedTurn } from "./turn-plan";
import type { FakeApi, FakeHttpError, FakeReply } from "./types";

/** Writes one reply in the wire format of the API that was called. */

function sendHttpError(api: FakeApi, ctx: WireContext, reply: FakeHttpError): void {
  const { status, headers, body } = httpErrorResponse(api, reply, ctx.newId("req_fake_"));
  ctx.w.json(status, body, headers);
}

async function sendWhole(api: FakeApi, ctx: WireContext, turn: PlannedTurn): Promise<void> {
  if (turn.hang) await ctx.w.hang();
  if (turn.streamError) return sendHttpError(api, ctx, streamErrorAsHttp(turn.streamError));
  if (api === "anthropic") return ctx.w.json(200, anthropicMessage(ctx, turn));
  if (api === "chat") return ctx.w.json(200, chatCompletion(ctx, turn));
  ctx.w.json(200, responsesResponse(ctx, turn));
}

function includeUsage(body: Record<string, unknown>): boolean {
  const options = body.stream_options;
  return typeof options === "object" && options !== null && (options as Record<string, unknown>).include_usage === true;
}

export async function answer(api: FakeApi, body: Record<string, unknown>, reply: FakeReply, ctx: WireContext): Promise<void> {
  await ctx.w.sleep(reply.firstByteDelayMs ?? 0);
  if (reply.kind === "http-error") return sendHttpError(api, ctx, reply);
  const turn = planTurn(reply);
  ctx.w.delayMs = turn.delayMs;
  if (body.stream !== true) return sendWhole(api, ctx, turn);
  if (api === "anthropic") return streamAnthropic(ctx, turn);
  if (api === "chat") return streamChat(ctx, turn, includeUsage(body));
  return streamResponses(ctx, turn);
}
