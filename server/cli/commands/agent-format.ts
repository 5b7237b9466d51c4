import type { AgentApproval, AgentInfo, AgentMerge, AgentOutputLine, AgentStreamEvent } from "../../../shared/agents";
import { agentStatusLabel } from "../../../shared/status-labels";
import { ago, statusPaint, table, type Paint, type Style } from "../io";

/** How `yard agent ...` shows agents and what happened to them, for people (`--json` for scripts). */

/** The argument naming an agent, in every `yard agent` command. */
export const AGENT = "<agent>";
export const AGENT_HELP = "the agent's id or alias";

/** One normalized event as a terminal line. */
export function renderEvent(e: AgentStreamEvent): string {
  switch (e.kind) {
    case "text":
      return e.text;
    case "thinking":
      return `(thinking) ${e.text}`;
    case "tool_call":
      return `→ ${e.name} ${JSON.stringify(e.input)}`;
    case "tool_result":
      return `${e.isError ? "✗" : "←"} ${e.name ?? e.id}: ${e.output}`;
    case "usage":
      return `· usage: ${e.usage.inputTokens} in, ${e.usage.outputTokens} out${e.usage.costUsd !== undefined ? `, $${e.usage.costUsd.toFixed(4)}` : ""}`;
    case "session":
      return `· session ${e.sessionId}${e.model ? ` (${e.model})` : ""}`;
    case "result":
      return `${e.isError ? "✗ failed" : "✓ result"}: ${e.message}`;
    case "error":
      return `${e.fatal ? "✗ error" : "! warning"}: ${e.message}`;
    case "rate_limit":
      return `! rate limited: ${e.message}${e.resetsAt ? ` (resets ${e.resetsAt})` : ""}`;
    case "system":
      return e.subtype === "user_message" ? `you: ${e.message}` : `· ${e.subtype}: ${e.message}`;
    case "raw":
      return e.text;
  }
}

/** Output lines as text: their events rendered, or the CLI's raw lines, or one JSON object a line. */
export function outputText(lines: AgentOutputLine[], format: "events" | "raw" | "json"): string {
  const out: string[] = [];
  for (const l of lines) {
    if (format === "json") out.push(JSON.stringify(l));
    else if (format === "raw") out.push(l.raw ?? "");
    else for (const e of l.events) out.push(renderEvent(e));
  }
  return out.length > 0 ? `${out.join("\n")}\n` : "";
}

/** The status `yard agent list` shows: the dashboard's words ("Done", "Needs you" whenever the agent waits on a human...). */
export function listedStatus(a: Pick<AgentInfo, "status" | "needsYou">): string {
  return agentStatusLabel(a);
}

/** The color of an agent's status (by its stored value; "needs_you" when it waits on a human). */
function paintOf(a: Pick<AgentInfo, "status" | "needsYou">, style: Style): Paint {
  return statusPaint(style, a.needsYou ? "needs_you" : a.status);
}

/** An agent's last merge as one line: "into main as 1a2b3c4d (squash) at …[, N new commits since]". */
export function describeMerge(m: AgentMerge, commitsSince: number | null): string {
  const since = commitsSince === null ? "" : commitsSince === 0 ? ", nothing new since" : `, ${commitsSince} new commit${commitsSince === 1 ? "" : "s"} since`;
  return `into ${m.into} as ${m.commit.slice(0, 8)} (${m.strategy}) at ${m.at}${since}`;
}

/** `yard agent get` for a person: one field a line. */
export function describeAgent(a: AgentInfo, commitsSinceMerge: number | null): string {
  const rows: Array<[string, string | null]> = [
    ["agent", `${a.alias} (${a.id})`],
    ["status", a.statusReason ? `${listedStatus(a)}: ${a.statusReason}` : listedStatus(a)],
    ["provider", `${a.provider} · ${a.mode} · ${a.permissionMode}${a.model ? ` · ${a.model}` : ""}`],
    ["branch", a.branch ? `${a.branch} from ${a.baseRef ?? "?"}` : null],
    ["repo", a.repoUrl],
    ["worktree", `${a.workspacePath}${a.workspaceRemoved ? " (cleaned up)" : ""}`],
    ["merged", a.merge ? describeMerge(a.merge, commitsSinceMerge) : a.branch ? "no" : null],
    ["result", a.result],
    ["questions", a.pendingQuestions.length > 0 ? a.pendingQuestions.map((q) => `${q.id}: ${q.question}`).join(" | ") : null],
    ["warning", a.cleanupWarning],
    ["usage", `${a.usage.inputTokens} in, ${a.usage.outputTokens} out${a.usage.costUsd !== undefined ? `, $${a.usage.costUsd.toFixed(4)}` : ""} (session ${a.sessionNumber})`],
    ["task", a.task.split("\n")[0] ?? ""],
  ];
  return `${rows
    .filter((r): r is [string, string] => r[1] !== null)
    .map(([k, v]) => `${k.padEnd(10)}${v}`)
    .join("\n")}\n`;
}

/** `yard agent spawn`: who it is and on which branch; where it works and how to follow it. */
export function spawnedText(a: AgentInfo, style: Style): string {
  const who = `Spawned ${style.bold(a.alias)} (${a.id}, ${a.provider})${a.branch ? ` on ${a.branch}` : ""}`;
  return `${who}\nWorktree ${a.workspacePath}; follow it: ${style.cyan(`yard agent logs ${a.alias} -f`)}\n`;
}

/** One line about an agent after an action on it: "brave-otter (agent_…): stopped". */
export function agentLine(verb: string, a: AgentInfo, style: Style): string {
  return `${verb} ${style.bold(a.alias)} (${a.id}): ${paintOf(a, style)(listedStatus(a))}${a.statusReason ? ` (${a.statusReason})` : ""}\n`;
}

/** What the NOTE column says: its merge, else why it is in its status, else its result. */
function noteOf(a: AgentInfo): string {
  if (a.merge) return `merged into ${a.merge.into}`;
  if (a.pendingApprovals > 0) return `${a.pendingApprovals} tool approval${a.pendingApprovals === 1 ? "" : "s"} waiting`;
  if (a.pendingQuestions.length > 0) return a.pendingQuestions.map((q) => `${q.id}: ${q.question}`).join(" | ");
  return (a.statusReason ?? a.result ?? a.task).trim().split("\n")[0] ?? "";
}

export function agentsTable(agents: AgentInfo[], opts: { width: number; style: Style }): string {
  if (agents.length === 0) return "No agents. Spawn one with: yard agent spawn --provider fake --prompt \"...\"\n";
  return table(
    agents,
    [
      { header: "ALIAS", value: (a) => a.alias },
      { header: "PROVIDER", value: (a) => a.provider },
      { header: "STATUS", value: listedStatus, paint: (v, a) => paintOf(a, opts.style)(v) },
      { header: "UPDATED", value: (a) => ago(a.updatedAt) },
      { header: "NOTE", value: noteOf, flex: true },
    ],
    opts,
  );
}

export function approvalsTable(approvals: AgentApproval[], agentAlias: (id: string) => string, opts: { width: number; style: Style }): string {
  if (approvals.length === 0) return "No tool approvals waiting.\n";
  return table(
    approvals,
    [
      { header: "APPROVAL", value: (a) => a.id },
      { header: "AGENT", value: (a) => agentAlias(a.agentId) },
      { header: "TOOL", value: (a) => a.toolName },
      { header: "INPUT", value: (a) => JSON.stringify(a.input ?? null), flex: true },
    ],
    opts,
  );
}

export type SweepRow = { alias: string; path: string; diskBytes: number | null; removed: boolean; note?: string };

export function sweepTable(rows: SweepRow[], opts: { width: number; style: Style }): string {
  if (rows.length === 0) return "No worktrees.\n";
  return table(
    rows,
    [
      { header: "ALIAS", value: (r) => r.alias },
      { header: "DISK", value: (r) => (r.diskBytes === null ? "?" : `${(r.diskBytes / 1e6).toFixed(1)} MB`), align: "right" },
      { header: "SWEEP", value: (r) => (r.removed ? `removed${r.note ? ` (${r.note})` : ""}` : "kept"), flex: true },
      { header: "PATH", value: (r) => r.path, flex: true, cut: "start" },
    ],
    opts,
  );
}
