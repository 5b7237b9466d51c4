import { stepCountIs, streamText, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { captureFinish, onlyFullStream } from "../models/finish";
import type { DaemonMeta } from "./persist";

/** One agent call of a daemon: streamText on the resolved model with the conversation so far. */

export type DaemonToolsFactory = (names: string[], ctx: { cwd: string; agentName: string; signal: AbortSignal }) => { tools: ToolSet; warnings: string[] };

export type TurnDeps = {
  resolveModel: (model: string) => { model: LanguageModel };
  buildTools?: DaemonToolsFactory;
};

/** Messages the model sees per turn (whole exchanges, newest first); the snapshot records all. */
export const VISIBLE_MESSAGES = 100;
const MAX_STEPS = 10;

/** The newest whole exchanges, up to VISIBLE_MESSAGES, starting at a user message. */
export function visibleMessages(all: ModelMessage[]): ModelMessage[] {
  if (all.length <= VISIBLE_MESSAGES) return all;
  for (let i = all.length - VISIBLE_MESSAGES; i < all.length; i++) if (all[i]!.role === "user") return all.slice(i);
  return all.slice(-1);
}

/** Run one turn; an aborted turn resolves with empty text (the caller checks the signal). */
export async function runDaemonTurn(
  deps: TurnDeps,
  meta: DaemonMeta,
  root: string,
  messages: ModelMessage[],
  signal: AbortSignal,
): Promise<{ text: string; responseMessages: ModelMessage[] }> {
  const { model } = deps.resolveModel(meta.options.model);
  const names = meta.options.tools ?? [];
  const built = names.length > 0 && deps.buildTools ? deps.buildTools(names, { cwd: root, agentName: meta.name, signal }) : undefined;
  const finish = captureFinish();
  const result = streamText({
    model,
    system: meta.system ?? undefined,
    messages,
    tools: built?.tools,
    stopWhen: stepCountIs(MAX_STEPS),
    abortSignal: signal,
    maxRetries: 1,
    // errors are read from fullStream below; the default handler would print them to stderr
    onError: () => {},
    onFinish: finish.onFinish,
  });
  let failure: unknown;
  for await (const part of onlyFullStream(result)) {
    if (part.type === "error") failure = part.error;
  }
  if (signal.aborted) return { text: "", responseMessages: [] };
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
  const { text, response } = finish.result();
  return { text, responseMessages: response.messages };
}
