import type { ContextUsage, StepResult, Usage } from "../../shared/runs";
import {
  DEFAULT_BREAK_CYCLE_SIGNAL_MATCH,
  DEFAULT_BREAK_CYCLE_SIGNALS,
  DEFAULT_BROADCAST_SEPARATOR,
  isAgentStep,
  isBroadcastFlow,
  isCycleFlow,
  type BreakCycleSignalMatch,
  type CycleFlow,
  type Flow,
  type FlowStep,
} from "../../shared/strategy";
import type { RunState } from "./run-state";

/** A step's output: the text the next step receives, and what it cost (an LLM call: its context). */
export type StepOutput = { text: string; usage: Usage; finishReason: string; contextUsage?: ContextUsage };

/** Runs one agent for one step; `stepEvents` false for a cycle's observer (no step_* frames). */
export type AgentInvoker = (agentName: string, input: string, stepKey: string, options: { stepEvents: boolean }) => Promise<StepOutput>;

/** A cycle without `cycles` runs until a break signal, at most this many passes. */
export const MAX_OPEN_CYCLE_PASSES = 100;

const zero = (): Usage => ({ promptTokens: 0, completionTokens: 0 });
const add = (a: Usage, b: Usage): Usage => ({ promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens });

/**
 * Executes a flow tree. Step keys are paths (`0.1`, `0.p2.1`, `0.p2.obs`): deterministic, so a
 * resumed run can recognise the steps it already completed.
 */
export class FlowExecutor {
  constructor(
    private readonly run: RunState,
    private readonly invoke: AgentInvoker,
  ) {}

  async execute(flow: Flow, input: string): Promise<StepOutput> {
    return this.flow(flow, input, "f");
  }

  private async step(step: FlowStep, input: string, key: string): Promise<StepOutput> {
    this.checkAborted();
    if (isAgentStep(step)) return this.agentStep(step.agent, input, key);
    return this.flowStep(step, input, key);
  }

  /** A nested flow as a step: announced with its name; its result has no context of its own. */
  private async flowStep(flow: Flow, input: string, key: string): Promise<StepOutput> {
    const requestId = this.run.requestId;
    const stepName = flow.name ?? flow.type;
    await this.run.emit("run.flow_started", { stepName, message: input, stepKey: key, requestId });
    const { contextUsage: _own, ...out } = await this.flow(flow, input, key);
    await this.run.emit("run.flow_completed", { stepName, result: { text: out.text, usage: out.usage, finishReason: out.finishReason }, stepKey: key, requestId });
    return out;
  }

  private async agentStep(agentName: string, input: string, key: string): Promise<StepOutput> {
    const done = this.run.memo.steps.get(key);
    if (done) return { text: done.text, usage: done.usage, finishReason: done.finishReason, ...(done.contextUsage ? { contextUsage: done.contextUsage } : {}) };
    const requestId = this.run.requestId;
    if (!this.run.memo.startedSteps.has(key)) await this.run.emit("run.step_started", { stepName: agentName, message: input, stepKey: key, requestId });
    const out = await this.invoke(agentName, input, key, { stepEvents: true });
    const result: StepResult = { text: out.text, usage: out.usage, ...(out.contextUsage ? { contextUsage: out.contextUsage } : {}), finishReason: out.finishReason };
    await this.run.emit("run.step_completed", { stepName: agentName, result, stepKey: key, requestId });
    return out;
  }

  private async flow(flow: Flow, input: string, key: string): Promise<StepOutput> {
    if (isBroadcastFlow(flow)) return this.broadcast(flow.steps, input, key, flow.separator ?? DEFAULT_BROADCAST_SEPARATOR);
    if (isCycleFlow(flow)) return this.cycle(flow, input, key);
    // sequential, and registered custom flow types, run their steps in order
    return this.sequence(flow.steps, input, key);
  }

  private async sequence(steps: FlowStep[], input: string, key: string): Promise<StepOutput> {
    let current: StepOutput = { text: input, usage: zero(), finishReason: "stop" };
    let usage = zero();
    for (const [i, step] of steps.entries()) {
      current = await this.step(step, current.text, `${key}.${i}`);
      usage = add(usage, current.usage);
    }
    return { text: current.text, usage, finishReason: current.finishReason };
  }

  private async broadcast(steps: FlowStep[], input: string, key: string, separator: string): Promise<StepOutput> {
    const outs = await Promise.all(steps.map((step, i) => this.step(step, input, `${key}.${i}`)));
    return {
      text: outs.map((o) => o.text).join(separator),
      usage: outs.reduce((u, o) => add(u, o.usage), zero()),
      finishReason: outs.every((o) => o.finishReason === "stop") ? "stop" : (outs.find((o) => o.finishReason !== "stop")?.finishReason ?? "stop"),
    };
  }

  /**
   * As the reference: the observer judges each pass; its signal ends the cycle with the pass's
   * output, else its verdict feeds the next pass (and, after the last pass, is the cycle's
   * output). The cycle's usage is its passes' (observer calls count in the run's usage and
   * budget, not in the flow's result).
   */
  private async cycle(flow: CycleFlow, input: string, key: string): Promise<StepOutput> {
    const passes = flow.cycles === undefined || flow.cycles === "Infinity" ? MAX_OPEN_CYCLE_PASSES : flow.cycles;
    const signals = flow.breakCycleSignals ?? [...DEFAULT_BREAK_CYCLE_SIGNALS];
    const match = flow.breakCycleSignalMatch ?? DEFAULT_BREAK_CYCLE_SIGNAL_MATCH;
    let next = input;
    let last: StepOutput = { text: input, usage: zero(), finishReason: "stop" };
    let usage = zero();
    for (let pass = 1; pass <= passes; pass++) {
      last = await this.sequence(flow.steps, next, `${key}.p${pass}`);
      usage = add(usage, last.usage);
      next = last.text;
      if (!flow.observer) {
        if (breaks(last.text, signals, match)) break;
        continue;
      }
      const verdict = await this.observe(flow.observer, last.text, `${key}.p${pass}.obs`);
      if (breaks(verdict.text, signals, match)) break;
      next = verdict.text;
    }
    return { text: next, usage, finishReason: last.finishReason };
  }

  private async observe(observer: string, text: string, key: string): Promise<StepOutput> {
    const done = this.run.memo.calls.get(key);
    if (done) return { text: done.text, usage: done.usage, finishReason: done.finishReason };
    return this.invoke(observer, text, key, { stepEvents: false });
  }

  private checkAborted(): void {
    this.run.signal.throwIfAborted();
  }
}

/** Does an observer's (or a pass's) text carry a break signal? Case-insensitive. */
export function breaks(text: string, signals: readonly string[], match: BreakCycleSignalMatch): boolean {
  const t = text.trim().toLowerCase();
  const lines = t.split(/\r?\n/).map((l) => l.trim().replace(/[.!]+$/, ""));
  return signals.some((raw) => {
    const s = raw.trim().toLowerCase();
    switch (match) {
      case "exact":
        return t.replace(/[.!]+$/, "") === s;
      case "first-line":
        return (lines[0] ?? "") === s || (lines[0] ?? "").startsWith(`${s} `) || (lines[0] ?? "").startsWith(`${s}:`);
      case "any-line":
        return lines.some((l) => l === s);
      default:
        return t.includes(s);
    }
  });
}
