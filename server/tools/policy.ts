import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { PermissionOperation } from "../../shared/runs";
import { deniedCommand } from "./command-deny-list";
import { commandGlob, GlobError, pathGlob } from "./globs";

/**
 * A run's permission policy: what a tool may do without asking a human.
 *
 * Rules are kept per tool (or `*` for every tool) and per mode: `read` (fs.read) and `write`
 * (fs.write; fs.exec counts as write, for run_command). A rule has `allow` / `deny` glob patterns
 * (paths relative to the cwd, or absolute; for run_command, patterns over the command line) and a
 * `default`. Deciding: a session decision for the identical call wins; then any matching `deny`
 * (tool or `*`), then any matching `allow`; then the tool's default, the `*` default, and last the
 * built-in default: inside the cwd allow, outside ask.
 *
 * run_command (fs.exec) as the reference does it, and a little safer: a command on the deny-list
 * (`command-deny-list.ts`) is refused before anything else and cannot be allowed; then the rules
 * above; then a command matching an approval pattern asks; the rest runs without asking, unless
 * commands are set to ask (SWITCHYARD_RUN_COMMAND=ask, or the strategy's `permissions`). The
 * deny-list is not a sandbox: it stops accidents, not an adversary.
 *
 * Patterns are globs (globs.ts): `deny` patterns match hidden files with `*` and `**`, `allow`
 * patterns only name them with a dot, so a rule never reaches further than it reads. A pattern
 * that does not parse (an unclosed `{`) is refused when the rule is set, with a GlobError.
 */

export type PolicyMode = "read" | "write";
export type PolicyDecision = "allow" | "deny" | "ask";
export type PolicyRule = { allow?: string[]; deny?: string[]; default?: PolicyDecision };
export type ToolPolicy = Partial<Record<PolicyMode, PolicyRule>>;
/** The `policies` of `policy_updated`: tool name (or `*`) -> mode -> rule. */
export type PolicySnapshot = Record<string, ToolPolicy>;
/** The protocol's update_policy (without runId). */
export type PolicyUpdate = { tool?: string; mode: PolicyMode; allow?: string[]; deny?: string[]; default?: PolicyDecision };
export type PermissionQuery = { tool: string; operation: PermissionOperation; resource: string };
export type SessionDecision = "allow-session" | "deny-session";
/** How commands without a rule of their own are decided (server setting and strategy permissions). */
export type CommandRules = { askAll?: boolean; askPatterns?: readonly string[] };

export const ALL_TOOLS = "*";

/** Which side of a rule a pattern is on: `deny` (and command ask patterns) or `allow`. */
type PatternKind = "allow" | "deny";

export function modeOf(operation: PermissionOperation): PolicyMode {
  return operation === "fs.read" ? "read" : "write";
}

function realCwd(cwd: string): string {
  try {
    return realpathSync(cwd);
  } catch {
    return resolve(cwd);
  }
}

function clone(snapshot: PolicySnapshot): PolicySnapshot {
  return structuredClone(snapshot);
}

export class PermissionPolicy {
  readonly cwd: string;
  private rules: PolicySnapshot;
  private readonly session = new Map<string, "allow" | "deny">();
  private readonly globs = new Map<string, (subject: string) => boolean>();

  constructor(cwd: string, rules: PolicySnapshot = {}) {
    this.cwd = realCwd(cwd);
    this.rules = {};
    for (const [tool, policy] of Object.entries(rules)) {
      for (const mode of ["read", "write"] as const) {
        const rule = policy[mode];
        if (rule) this.update({ tool, mode, ...rule });
      }
    }
  }

  /** True when an absolute path is the cwd or below it. */
  isInside(path: string): boolean {
    const rel = relative(this.cwd, path);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
  }

  decide(query: PermissionQuery, commands: CommandRules = {}): PolicyDecision {
    if (query.operation === "fs.exec" && deniedCommand(query.resource)) return "deny";
    const remembered = this.session.get(sessionKey(query));
    if (remembered) return remembered;
    const mode = modeOf(query.operation);
    const layers = [this.rules[query.tool]?.[mode], this.rules[ALL_TOOLS]?.[mode]].filter((r): r is PolicyRule => r !== undefined);
    const matches = (patterns: readonly string[] | undefined, kind: PatternKind) => (patterns ?? []).some((p) => this.matches(p, kind, query));
    if (layers.some((rule) => matches(rule.deny, "deny"))) return "deny";
    if (layers.some((rule) => matches(rule.allow, "allow"))) return "allow";
    if (query.operation === "fs.exec" && matches(commands.askPatterns, "deny")) return "ask";
    const configured = layers.find((rule) => rule.default !== undefined)?.default;
    if (configured) return configured;
    if (query.operation === "fs.exec") return commands.askAll ? "ask" : "allow";
    return this.isInside(query.resource) ? "allow" : "ask";
  }

  /**
   * update_policy: sets the given fields of one rule (patterns are replaced, not appended). A
   * pattern that is not a valid glob throws a GlobError naming it, and nothing changes.
   */
  update(change: PolicyUpdate): PolicySnapshot {
    const tool = change.tool ?? ALL_TOOLS;
    for (const [field, kind] of [["allow", "allow"], ["deny", "deny"]] as const) {
      for (const pattern of change[field] ?? []) {
        try {
          this.glob(pattern, kind, false);
        } catch (err) {
          if (err instanceof GlobError) throw new GlobError(`${field} rule of ${tool === ALL_TOOLS ? "every tool" : tool} (${change.mode}): ${err.message}`);
          throw err;
        }
      }
    }
    const policy = (this.rules[tool] ??= {});
    const rule: PolicyRule = { ...policy[change.mode] };
    if (change.allow !== undefined) rule.allow = [...change.allow];
    if (change.deny !== undefined) rule.deny = [...change.deny];
    if (change.default !== undefined) rule.default = change.default;
    policy[change.mode] = rule;
    return this.toJSON();
  }

  /** A human's allow-session / deny-session: later identical calls are decided without asking. */
  remember(tool: string, operation: PermissionOperation, resource: string, decision: SessionDecision): void {
    this.session.set(sessionKey({ tool, operation, resource }), decision === "allow-session" ? "allow" : "deny");
  }

  toJSON(): PolicySnapshot {
    return clone(this.rules);
  }

  private matches(pattern: string, kind: PatternKind, query: PermissionQuery): boolean {
    if (query.operation === "fs.exec") return this.glob(pattern, kind, true)(query.resource);
    const match = this.glob(pattern, kind, false);
    if (isAbsolute(pattern)) return match(query.resource);
    const rel = relative(this.cwd, query.resource).split(sep).join("/");
    // A relative pattern covers the cwd; it reaches outside only when it says so (`../x/**`).
    if (rel.startsWith("../") && !pattern.startsWith("../")) return false;
    return match(rel === "" ? "." : rel);
  }

  /** A compiled pattern: deny (and ask) patterns match hidden names, allow patterns name them. */
  private glob(pattern: string, kind: PatternKind, command: boolean): (subject: string) => boolean {
    const key = `${kind}:${command ? "command" : "path"}:${pattern}`;
    let match = this.globs.get(key);
    if (!match) {
      match = command ? commandGlob(pattern) : pathGlob(pattern, { hidden: kind === "deny" });
      this.globs.set(key, match);
    }
    return match;
  }
}

function sessionKey(query: PermissionQuery): string {
  return `${query.tool}\u0000${query.operation}\u0000${query.resource}`;
}
