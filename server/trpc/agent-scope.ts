import { TRPCError } from "@trpc/server";
import type { AgentGrant } from "../../shared/agents";
import { DomainError } from "../errors";
import type { Context } from "./context";

/**
 * What an agent may do with its own token (the principal `{kind: "agent"}`): act on itself and on
 * the agents it spawned (its children), ask anyone, read and answer the questions addressed to it.
 * Nothing else: no accounts, no other agents, no runs, no event stream, no approvals of tool calls
 * (not even its own: that is the human's decision), and no daemons unless it was spawned with the
 * `daemons` grant (list, trigger, snapshot; never spawn, stop or delete one). Every procedure of
 * the router has a rule here; one without (a new procedure) is refused to agents until it gets one
 * (a test checks every procedure is listed).
 */
type Rule = "allow" | "deny" | Granted | ((ctx: Context, input: Record<string, unknown>, self: string) => boolean | Promise<boolean>);

/** Only for an agent spawned with this grant (`grants` of agents.spawn). */
type Granted = { grant: AgentGrant };
const DAEMONS: Granted = { grant: "daemons" };

/** Its own agent or one it spawned, by id or alias in the input's `agentId`. */
const family: Rule = async (ctx, input, self) => {
  const ref = input.agentId;
  if (typeof ref !== "string") return false;
  const [family, id] = await Promise.all([ctx.agents.familyOf(self), ctx.agents.resolveId(ref, { lenient: true })]);
  return family.has(id);
};

/** The agent itself, in `key`. */
const itself =
  (key: string): Rule =>
  async (ctx, input, self) =>
    typeof input[key] === "string" && (await ctx.agents.resolveId(input[key], { lenient: true })) === self;

/** A conversation it asked or that was asked of it (`to`: only one asked of it). */
const conversation =
  (to: boolean): Rule =>
  async (ctx, input, self) => {
    if (typeof input.conversationId !== "string") return false;
    const c = await ctx.conversations.get(input.conversationId);
    const toSelf = (await ctx.agents.resolveId(c.toAgentId, { lenient: true })) === self;
    return to ? toSelf : toSelf || (await ctx.agents.resolveId(c.fromAgentId, { lenient: true })) === self;
  };

export const AGENT_RULES: Record<string, Rule> = {
  health: "allow",
  "system.info": "allow",
  "agents.providers": "allow",
  // its children: the router records it as their parent (and the tree's limits apply)
  "agents.spawn": "allow",
  // the router lists only its family
  "agents.list": "allow",
  // counted over its family, as agents.list lists it
  "agents.counts": "allow",
  "agents.get": family,
  "agents.stop": family,
  "agents.delete": family,
  "agents.resume": family,
  "agents.message": family,
  "agents.output": family,
  "agents.changes": family,
  "agents.merge": family,
  "agents.cleanup": family,
  "agents.diff": family,
  "agents.approvals": family,
  "agents.onOutput": family,
  "agents.onUpdate": "deny",
  "agents.decide": "deny",
  "agents.sweep": "deny",
  "conversations.ask": itself("fromAgentId"),
  "conversations.pending": itself("agentId"),
  "conversations.onPending": itself("agentId"),
  "conversations.list": itself("agentId"),
  "conversations.get": conversation(false),
  "conversations.answer": conversation(true),
  "servers.list": "deny",
  "workers.list": "deny",
  "workers.get": "deny",
  "workers.createToken": "deny",
  "workers.revoke": "deny",
  "workers.drain": "deny",
  "events.onEvent": "deny",
  "events.onEventBatch": "deny",
  "events.list": "deny",
  "events.count": "deny",
  "events.emit": "deny",
  "strategies.list": "deny",
  "strategies.get": "deny",
  "strategies.validate": "deny",
  "runs.prepare": "deny",
  "runs.start": "deny",
  "runs.continue": "deny",
  "runs.stop": "deny",
  "runs.steer": "deny",
  "runs.respond": "deny",
  "runs.updatePolicy": "deny",
  "runs.list": "deny",
  "runs.counts": "deny",
  "runs.get": "deny",
  "runs.timeline": "deny",
  "runs.onEvents": "deny",
  "models.list": "deny",
  "models.providers": "deny",
  "daemons.spawn": "deny",
  "daemons.trigger": DAEMONS,
  "daemons.snapshot": DAEMONS,
  "daemons.stop": "deny",
  "daemons.resume": "deny",
  "daemons.list": DAEMONS,
  "daemons.delete": "deny",
  "daemons.onEvents": "deny",
  "accounts.list": "deny",
  "accounts.get": "deny",
  "accounts.add": "deny",
  "accounts.remove": "deny",
  "accounts.reset": "deny",
  "inbox.list": "deny",
  "inbox.onChange": "deny",
  "auth.loginLink": "deny",
};

/** Refuses (FORBIDDEN, AGENT_FORBIDDEN) a call past an agent's rights; anyone else passes. */
export async function checkAgentScope(ctx: Context, path: string, rawInput: unknown): Promise<void> {
  if (ctx.principal?.kind !== "agent") return;
  const self = ctx.principal.agentId;
  const rule = AGENT_RULES[path] ?? "deny";
  const input = rawInput && typeof rawInput === "object" ? (rawInput as Record<string, unknown>) : {};
  if (await allows(rule, ctx, input, self)) return;
  const why =
    typeof rule === "object"
      ? `${path} needs the "${rule.grant}" grant, given at spawn (agents.spawn with grants: ["${rule.grant}"]), and agent ${self} was not given it`
      : `An agent's token may act only on itself and the agents it spawned: ${path} is not allowed for agent ${self}`;
  const cause = new DomainError("AGENT_FORBIDDEN", why, { kind: "FORBIDDEN", details: { procedure: path, agentId: self, ...(typeof rule === "object" ? { grant: rule.grant } : {}) } });
  throw new TRPCError({ code: "FORBIDDEN", message: cause.message, cause });
}

async function allows(rule: Rule, ctx: Context, input: Record<string, unknown>, self: string): Promise<boolean> {
  try {
    if (rule === "allow" || rule === "deny") return rule === "allow";
    if (typeof rule === "object") return await ctx.agents.hasGrant(self, rule.grant);
    return await rule(ctx, input, self);
  } catch {
    return false; // e.g. the conversation does not exist: not its own
  }
}
