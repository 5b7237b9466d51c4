import { randomUUID } from "node:crypto";
import { z } from "zod";
import { jsonSchema, Output, stepCountIs, streamText, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { captureFinish, onlyFullStream } from "../models/finish";
import { pacedModel } from "../models/paced-model";
import type { AgentCallRecord, ContextUsage, StreamEvent, Usage } from "../../shared/runs";
import { isCliAgent, isLlmAgent, isUserAgent, type LlmAgent, type UserAgent } from "../../shared/strategy";
import { DomainError } from "../errors";
import { charge } from "./budget";
import { callCli, type CliStepDeps } from "./cli-step";
import { DeltaBatcher } from "./delta-batcher";
import { DEFAULT_PRICES, type PriceTable } from "./pricing";
import type { StepOutput } from "./flow-executor";
import { RunCancelledError, type RunState } from "./run-state";
import { commandRules, StreamReached, toolHost, type ToolHost } from "./tool-host";

/** What the engine needs from the model registry. */
export type ResolvedModel = { model: LanguageModel; id: string; contextWindow: number };
export type ModelResolver = (modelString: string, override?: string) => ResolvedModel;

export type { CommandNotice, ToolHost } from "./tool-host";
export type ToolsFactory = (names: string[], host: ToolHost) => { tools: ToolSet; warnings: string[] };

export type AgentCallDeps = {
  resolveModel: ModelResolver;
  buildTools: ToolsFactory;
  /** CLI steps (`type: cli`): the agents service and the bus its events are on. */
  cli?: CliStepDeps;
  /** Model prices for budgets (default DEFAULT_PRICES). */
  prices?: PriceTable;
  /** SWITCHYARD_RUN_COMMAND: "ask" makes every run_command ask a human (default "auto"). */
  runCommand?: "auto" | "ask";
};

/** Default bound on model round-trips per agent call when the strategy sets no maxSteps. */
export const DEFAULT_MAX_STEPS = 10;

const toUsage = (u: { inputTokens?: number; outputTokens?: number } | undefined): Usage => ({
  promptTokens: u?.inputTokens ?? 0,
  completionTokens: u?.outputTokens ?? 0,
});

/** Run one agent of the strategy on one input. */
export async function callAgent(run: RunState, deps: AgentCallDeps, agentName: string, input: string, stepKey: string): Promise<StepOutput> {
  const agent = run.config.strategy.agents[agentName];
  if (!agent) throw new DomainError("EXECUTION_ERROR", `Unknown agent "${agentName}"`);
  if (isUserAgent(agent)) return callUser(run, agentName, agent, input, stepKey);
  if (isLlmAgent(agent)) return callLlm(run, deps, agentName, agent, input, stepKey);
  if (isCliAgent(agent)) {
    const out = await callCli(run, deps.cli, agentName, agent, input, stepKey, withSteering(run, agentName, input));
    await charge(run, deps.prices ?? DEFAULT_PRICES, { agentName, model: `cli/${agent.provider}`, promptTokens: out.usage.promptTokens, completionTokens: out.usage.completionTokens, ...(out.costUsd !== undefined ? { costUsd: out.costUsd } : {}) });
    return { text: out.text, usage: out.usage, finishReason: out.finishReason };
  }
  throw new DomainError("EXECUTION_ERROR", `Agent "${agentName}" has type "${agent.type}", which no executor handles`);
}

/**
 * A user agent, as the reference's: it asks a human (`request_input`) only when the message it gets
 * is empty (a run started without input, or an empty step output before it) and `requireInput` is
 * not false; otherwise it answers at once with its `presetMessage`, or passes the message on. The
 * prompt shown to the human is the preset message when there is one.
 */
async function callUser(run: RunState, agentName: string, agent: UserAgent, input: string, stepKey: string): Promise<StepOutput> {
  const preset = agent.config?.presetMessage;
  const requireInput = agent.config?.requireInput ?? true;
  if (!requireInput || input !== "") return { text: preset ?? input, usage: { promptTokens: 0, completionTokens: 0 }, finishReason: "stop" };
  const answer = await run.ask({ kind: "input", agentName, prompt: preset ?? "", stepKey });
  return { text: answer.text, usage: { promptTokens: 0, completionTokens: 0 }, finishReason: "stop" };
}

/** The agent's earlier calls as messages, trimmed to its rolling window (whole calls only). */
function historyMessages(run: RunState, agentName: string, agent: LlmAgent): ModelMessage[] {
  const records = run.history.get(agentName) ?? [];
  const perRecord = records.map((r) => [{ role: "user", content: r.userMessage } as ModelMessage, ...(r.responseMessages as ModelMessage[])]);
  const window = agent.context?.rollingWindow;
  let kept = perRecord;
  if (window?.maxMessages !== undefined) {
    let count = 0;
    const out: ModelMessage[][] = [];
    for (let i = perRecord.length - 1; i >= 0; i--) {
      count += perRecord[i]!.length;
      if (count > window.maxMessages) break;
      out.unshift(perRecord[i]!);
    }
    kept = out;
  }
  if (window?.maxTokens !== undefined) {
    let chars = 0;
    const out: ModelMessage[][] = [];
    for (let i = kept.length - 1; i >= 0; i--) {
      chars += JSON.stringify(kept[i]).length;
      if (chars / 4 > window.maxTokens) break;
      out.unshift(kept[i]!);
    }
    kept = out;
  }
  return kept.flat();
}

export function renderSystemPrompt(agent: LlmAgent, vars: Record<string, string>): string | undefined {
  const t = agent.systemPromptTemplate;
  if (!t) return agent.systemPrompt;
  const values: Record<string, string> = { ...vars };
  for (const [k, v] of Object.entries(t.variables ?? {})) values[k] = typeof v === "string" ? v : Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
  const body = t.template.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (m, name: string) => values[name] ?? m);
  return agent.systemPrompt ? `${agent.systemPrompt}\n\n${body}` : body;
}

function withSteering(run: RunState, agentName: string, input: string): string {
  const steering = run.takeSteering();
  if (steering.length === 0) return input;
  for (const text of steering) void run.emit("run.steer_applied", { agentName, text }).catch(() => {});
  return `${input}\n\n[Steering from the user]\n${steering.join("\n")}`;
}

async function callLlm(run: RunState, deps: AgentCallDeps, agentName: string, agent: LlmAgent, input: string, stepKey: string): Promise<StepOutput> {
  const resolved = deps.resolveModel(agent.model, run.config.modelOverride);
  const meta = { agentName, model: resolved.id, contextWindow: resolved.contextWindow, stepKey, requestId: run.requestId };
  // This segment's signal: once aborted (stop_run, or finish() ending the run) nothing more is
  // streamed, so no frame can follow strategy_completed / strategy_error.
  const signal = run.signal;
  const batcher = new DeltaBatcher((event) => {
    if (signal.aborted) return;
    void run.emit("run.agent_streamed", { ...meta, event }).catch(() => {});
  });
  const stream = (event: StreamEvent) => batcher.event(event);
  const userMessage = withSteering(run, agentName, input);
  const announced = new Set<string>();
  const reached = new StreamReached();
  const built = agent.tools?.length
    ? deps.buildTools(agent.tools, toolHost(run, agentName, stepKey, batcher, reached, commandRules(run, deps), (call) => {
        announced.add(call.toolCallId);
        stream({ type: "tool-call", ...call });
      }))
    : undefined;
  for (const message of built?.warnings ?? []) await run.warnOnce(message, `agents.${agentName}.tools`);
  const tools = built?.tools;
  const o = agent.modelOptions ?? {};
  const finish = captureFinish();
  const result = streamText({
    // read in time slices: parallel runs take turns, and a new run's first text is not queued
    // behind other runs' answers (see pacedModel)
    model: pacedModel(resolved.model),
    system: renderSystemPrompt(agent, { input, agentName, cwd: run.config.cwd, date: new Date().toISOString().slice(0, 10) }),
    messages: [...historyMessages(run, agentName, agent), { role: "user", content: userMessage }],
    tools,
    stopWhen: stepCountIs(agent.maxSteps ?? DEFAULT_MAX_STEPS),
    abortSignal: run.signal,
    temperature: o.temperature,
    topP: o.topP,
    topK: o.topK,
    maxOutputTokens: o.maxOutputTokens ?? o.maxTokens,
    presencePenalty: o.presencePenalty,
    frequencyPenalty: o.frequencyPenalty,
    stopSequences: o.stopSequences,
    seed: o.seed,
    providerOptions: agent.providerOptions as Parameters<typeof streamText>[0]["providerOptions"],
    ...(agent.outputSchema ? { output: Output.object({ schema: await outputSchemaOf(run, agentName, agent.outputSchema) }) } : {}),
    maxRetries: 1,
    // errors are read from fullStream below; the default handler would print them to stderr
    onError: () => {},
    // the answer as a whole, taken here: the result's own promises (text, response, ...) would
    // each replay the whole buffered stream once more (see server/models/finish.ts)
    onFinish: finish.onFinish,
  });

  let lastStepUsage: ContextUsage | undefined;
  let failure: unknown;
  for await (const part of onlyFullStream(result)) {
    switch (part.type) {
      case "start-step":
        stream({ type: "step-start" });
        break;
      case "tool-call":
        // everything the model streamed before this call is in the batcher now
        reached.reach(part.toolCallId);
        break;
      case "text-delta":
        if (part.text) batcher.text(part.text);
        break;
      case "reasoning-start":
        stream({ type: "thinking-start", id: part.id });
        break;
      case "reasoning-delta":
        if (part.text) batcher.thinking(part.id, part.text);
        break;
      case "reasoning-end":
        stream({ type: "thinking-end", id: part.id });
        break;
      case "tool-result":
      case "tool-error": {
        if (!announced.has(part.toolCallId)) {
          announced.add(part.toolCallId);
          stream({ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, args: JSON.stringify(part.input ?? {}) });
        }
        if (part.type === "tool-result") {
          stream({ type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: asText(part.output), status: "completed" });
        } else {
          const message = part.error instanceof Error ? part.error.message : String(part.error);
          stream({ type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: message, status: "error", error: message });
        }
        break;
      }
      case "finish-step":
        lastStepUsage = contextUsage(part.usage);
        break;
      case "error":
        failure = part.error;
        break;
      case "abort":
        failure = new RunCancelledError();
        break;
      default:
        break;
    }
  }
  batcher.flush();
  if (run.signal.aborted) throw new RunCancelledError();
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));

  const { text: rawText, totalUsage, finishReason, response } = finish.result();
  const text = agent.outputSchema ? await structuredText(result.output, agentName) : rawText;
  const usage = toUsage(totalUsage);
  run.addUsage(usage);
  await run.emit("run.agent_responded", { ...meta, text, usage, contextUsage: lastStepUsage });
  const context = lastStepUsage ? { contextUsage: lastStepUsage } : {};
  stream({ type: "done", result: { text, usage, ...context, finishReason } });
  const record: AgentCallRecord = {
    id: randomUUID(),
    agentName,
    createdAt: new Date().toISOString(),
    userMessage,
    responseMessages: response.messages,
    text,
    usage,
    ...context,
    finishReason,
    stepKey,
  };
  await run.emit("run.agent_called", { record });
  run.recordCall(record);
  await charge(run, deps.prices ?? DEFAULT_PRICES, { agentName, model: resolved.id, ...usage });
  return { text, usage, ...context, finishReason };
}

/**
 * The agent's outputSchema as a validating schema (zod's JSON Schema import), so a wrong shape is
 * caught, not just bad JSON. A schema zod cannot import is still sent to the model, parsed but not
 * validated, with a warning.
 */
async function outputSchemaOf(run: RunState, agentName: string, schema: Record<string, unknown>) {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    const message = `The outputSchema of "${agentName}" cannot be checked (${err instanceof Error ? err.message : String(err)}): answers are parsed as JSON but not validated`;
    await run.warnOnce(message, `agents.${agentName}.outputSchema`);
    return jsonSchema(schema as Parameters<typeof jsonSchema>[0]);
  }
}

/** outputSchema: the parsed, validated object as JSON text (what the next step gets), or a clear error. */
async function structuredText(output: PromiseLike<unknown>, agentName: string): Promise<string> {
  try {
    return JSON.stringify(await output);
  } catch (err) {
    const reason = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
    throw new DomainError("EXECUTION_ERROR", `Agent "${agentName}" did not answer in the shape of its outputSchema: ${reason.slice(0, 500)}`);
  }
}

/** The last model step's tokens: what the agent's context holds after the call (the Comma meter). */
function contextUsage(u: { inputTokens?: number; outputTokens?: number; totalTokens?: number; inputTokenDetails?: Record<string, number | undefined> }): ContextUsage {
  return {
    totalTokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0),
    inputTokens: u.inputTokens ?? 0,
    outputTokens: u.outputTokens ?? 0,
    inputTokenDetails: {
      noCacheTokens: u.inputTokenDetails?.noCacheTokens ?? u.inputTokens ?? 0,
      cacheReadTokens: u.inputTokenDetails?.cacheReadTokens ?? 0,
      cacheWriteTokens: u.inputTokenDetails?.cacheWriteTokens ?? 0,
    },
  };
}

function asText(output: unknown): string {
  if (typeof output === "string") return output;
  return JSON.stringify(output) ?? "";
}
