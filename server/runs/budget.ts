import { DomainError } from "../errors";
import { costOf, type PriceTable } from "./pricing";
import type { RunState } from "./run-state";

/**
 * Budgets: every agent call's tokens (and dollars: a CLI's own cost, else the price table) are
 * added to the segment's spend, announced as `run.spend_updated`, and a call that takes the spend over
 * the run's budget ends the run with BUDGET_EXCEEDED once that call is done.
 */
export async function charge(run: RunState, prices: PriceTable, c: { agentName: string; model: string; promptTokens: number; completionTokens: number; costUsd?: number }): Promise<void> {
  const tokens = c.promptTokens + c.completionTokens;
  let usd = c.costUsd ?? costOf(prices, c.model, { promptTokens: c.promptTokens, completionTokens: c.completionTokens });
  if (usd === null) {
    usd = 0;
    const message = `No price is known for ${c.model}: its calls count 0 USD against budgets (set SWITCHYARD_MODEL_PRICES)`;
    const budget = run.config.budget ?? run.config.strategy.budget;
    if (budget?.usd !== undefined && tokens > 0) await run.warnOnce(message, `agents.${c.agentName}`);
  }
  run.spend(tokens, usd);
  const budget = run.config.budget ?? run.config.strategy.budget;
  await run.emit("run.spend_updated", { tokens: run.spent.tokens, usd: Math.round(run.spent.usd * 1e6) / 1e6, ...(budget ? { budget } : {}) });
  if (budget?.tokens !== undefined && run.spent.tokens > budget.tokens) {
    throw new DomainError("BUDGET_EXCEEDED", `The run spent ${run.spent.tokens} tokens, over its budget of ${budget.tokens}: stopped after agent "${c.agentName}"`);
  }
  if (budget?.usd !== undefined && run.spent.usd > budget.usd) {
    throw new DomainError("BUDGET_EXCEEDED", `The run spent $${run.spent.usd.toFixed(4)}, over its budget of $${budget.usd}: stopped after agent "${c.agentName}"`);
  }
}
