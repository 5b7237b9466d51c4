import type { Command } from ".";
import type { AgentInfo, AgentMerge, AgentOutputLine, AgentStreamEvent } from "../../../shared/agents";
import { clientFrom, connectionOptions, explain, parse } from "./common";

const USAGE = `usage: yard agent <spawn|list|get|stop|resume|message|logs|approvals|approve|deny|merge|diff|cleanup|sweep|delete> ...
  yard agent spawn --provider claude|codex|fake|... --prompt TEXT [--repo DIR [--init]] [--base REF] [--mode execute|plan|discuss|refine|review]
                   [--permission bypass|acceptEdits|ask] [--model M] [--alias NAME] [--task-id ID] [--phase-id ID] [--account LABEL]
  yard agent list [--status S]...          needs_you while it waits for your answers or a tool approval (--status needs_you: those)
  yard agent get|stop <agent>              <agent>: its id or its alias, in every command
  yard agent get <agent> [--json]          status, branch, last merge, result (--json: the whole record)
  yard agent resume <agent> --answer q1=TEXT [--answer q2=TEXT]...
  yard agent message <agent> TEXT
  yard agent logs <agent> [--follow|-f] [--raw] [--lines N] [--from LINE]
  yard agent approvals [<agent>]           pending tool approvals
  yard agent approve|deny <approval id> [--message TEXT]
  yard agent merge <agent> [--into BRANCH] [--strategy merge|squash|rebase]   bring its branch into BRANCH (default: the one it started from)
  yard agent diff <agent> [--patch]        changed files against its base (and the patch)
  yard agent cleanup <agent> [--discard]   remove its worktree now (branch kept with commits; --discard throws away uncommitted work)
  yard agent sweep                         disk used per worktree; remove merged, clean ones
  yard agent delete <agent> [--force]`;

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const LIVE = new Set(["starting", "running"]);

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

function printLines(lines: AgentOutputLine[], raw: boolean): void {
  const out: string[] = [];
  for (const l of lines) {
    if (raw) out.push(l.raw ?? "");
    else for (const e of l.events) out.push(renderEvent(e));
  }
  if (out.length > 0) process.stdout.write(`${out.join("\n")}\n`);
}

/** The status `yard agent list` shows: "needs_you" whenever the agent waits on a human (answers or an approval), as the dashboard does. */
export function listedStatus(a: Pick<AgentInfo, "status" | "needsYou">): string {
  return a.needsYou ? "needs_you" : a.status;
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
    ["status", a.statusReason ? `${a.status}: ${a.statusReason}` : a.status],
    ["provider", `${a.provider} · ${a.mode} · ${a.permissionMode}${a.model ? ` · ${a.model}` : ""}`],
    ["branch", a.branch ? `${a.branch} from ${a.baseRef ?? "?"}` : null],
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

function answersOf(list: string[] | undefined): Record<string, string> {
  const answers: Record<string, string> = {};
  for (const item of list ?? []) {
    const i = item.indexOf("=");
    if (i <= 0) throw new Error(`--answer expects QUESTION_ID=TEXT, got "${item}"`);
    answers[item.slice(0, i)] = item.slice(i + 1);
  }
  return answers;
}

export const agent: Command = {
  summary: "CLI coding agents: yard agent spawn|list|get|stop|resume|message|logs|approve|deny|merge|delete",
  async run(args) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(
      rest,
      {
        ...connectionOptions,
        provider: { type: "string" },
        prompt: { type: "string" },
        repo: { type: "string" },
        base: { type: "string" },
        init: { type: "boolean" },
        mode: { type: "string" },
        permission: { type: "string" },
        model: { type: "string" },
        alias: { type: "string" },
        "task-id": { type: "string" },
        "phase-id": { type: "string" },
        status: { type: "string", multiple: true },
        answer: { type: "string", multiple: true },
        follow: { type: "boolean", short: "f" },
        raw: { type: "boolean" },
        lines: { type: "string" },
        from: { type: "string" },
        message: { type: "string" },
        force: { type: "boolean" },
        into: { type: "string" },
        account: { type: "string" },
        strategy: { type: "string" },
        patch: { type: "boolean" },
        discard: { type: "boolean" },
        json: { type: "boolean" },
      },
      true,
    );
    const { url, client } = clientFrom(values);
    const id = positionals[0];
    const need = () => {
      if (!id) throw new Error(USAGE);
      return id;
    };
    try {
      switch (sub) {
        case "spawn": {
          if (!values.provider || !values.prompt) throw new Error(USAGE);
          print(
            await client.agents.spawn.mutate({
              provider: values.provider,
              prompt: values.prompt,
              repo: values.repo ?? process.cwd(),
              baseRef: values.base,
              ...(values.init ? { init: true } : {}),
              mode: values.mode as never,
              permissionMode: values.permission as never,
              model: values.model,
              alias: values.alias,
              taskId: values["task-id"],
              phaseId: values["phase-id"],
              account: values.account,
            }),
          );
          return 0;
        }
        case "list": {
          // "needs_you" is derived, not stored: filtered here
          const wanted = values.status ?? [];
          const stored = wanted.filter((s) => s !== "needs_you");
          const all = await client.agents.list.query(wanted.length > 0 && stored.length === wanted.length ? { status: stored as never } : {});
          const agents = wanted.length === stored.length ? all : all.filter((a) => a.needsYou || stored.includes(a.status));
          for (const a of agents) process.stdout.write(`${a.id}  ${a.alias.padEnd(24)} ${a.provider.padEnd(8)} ${listedStatus(a).padEnd(18)} ${a.branch ?? a.workspacePath}${a.merge ? `  merged into ${a.merge.into}` : ""}\n`);
          return 0;
        }
        case "get": {
          const info = await client.agents.get.query({ agentId: need() });
          if (values.json) {
            print(info);
            return 0;
          }
          // the commits since the last merge need git: asked only for a merged agent (null when unreadable)
          const since = info.merge ? await client.agents.changes.query({ agentId: info.id }).then((c) => c.commitsSinceMerge, () => null) : null;
          process.stdout.write(describeAgent(info, since));
          return 0;
        }
        case "stop":
          print(await client.agents.stop.mutate({ agentId: need() }));
          return 0;
        case "delete":
          print(await client.agents.delete.mutate({ agentId: need(), force: values.force ?? false }));
          return 0;
        case "resume":
          print(await client.agents.resume.mutate({ agentId: need(), answers: answersOf(values.answer) }));
          return 0;
        case "message": {
          const text = positionals.slice(1).join(" ");
          if (!text) throw new Error(USAGE);
          const r = await client.agents.message.mutate({ agentId: need(), text });
          print({ delivered: r.delivered, status: r.agent.status, queued: r.agent.queuedMessages.length });
          return 0;
        }
        case "approvals":
          print(await client.agents.approvals.query({ agentId: id, status: "pending" }));
          return 0;
        case "approve":
        case "deny":
          print(await client.agents.decide.mutate({ approvalId: need(), allow: sub === "approve", message: values.message }));
          return 0;
        case "merge":
          print(await client.agents.merge.mutate({ agentId: need(), ...(values.into ? { into: values.into } : {}), ...(values.strategy ? { strategy: values.strategy as "merge" | "squash" | "rebase" } : {}) }));
          return 0;
        case "diff": {
          const changes = await client.agents.changes.query({ agentId: need() });
          for (const f of changes.files) process.stdout.write(`${f.status} ${f.path} +${f.insertions} -${f.deletions}\n`);
          process.stdout.write(`${changes.files.length} file(s), +${changes.insertions} -${changes.deletions}, ${changes.commitsAhead} commit(s)${changes.dirty ? ", uncommitted changes" : ""}\n`);
          if (values.patch) process.stdout.write((await client.agents.diff.query({ agentId: need() })).patch);
          return 0;
        }
        case "cleanup":
          print(await client.agents.cleanup.mutate({ agentId: need(), discard: values.discard ?? false }));
          return 0;
        case "sweep":
          for (const r of await client.agents.sweep.mutate()) {
            process.stdout.write(`${r.alias.padEnd(24)} ${r.diskBytes === null ? "?" : `${(r.diskBytes / 1e6).toFixed(1)} MB`}  ${r.removed ? `removed (${r.note})` : "kept"}  ${r.path}\n`);
          }
          return 0;
        case "logs":
          return await logs(client, need(), values);
        default:
          throw new Error(USAGE);
      }
    } catch (err) {
      throw explain(err, url);
    }
  },
};

type Client = ReturnType<typeof clientFrom>["client"];

async function logs(client: Client, agentId: string, values: { follow?: boolean; raw?: boolean; lines?: string; from?: string }): Promise<number> {
  const format = values.raw ? "raw" : "events";
  const limit = values.lines ? Number(values.lines) : 100;
  // the cursor is taken BEFORE the page is read: nothing can fall between the page and the stream
  const { lastEventId } = await client.system.info.query();
  const page = await client.agents.output.query({ agentId, limit, format, ...(values.from ? { fromLine: Number(values.from) } : {}) });
  printLines(page.lines, !!values.raw);
  if (!values.follow) return 0;
  let next = page.fromLine + page.lines.length;
  const info = await client.agents.get.query({ agentId: page.agentId });
  if (!LIVE.has(info.status)) {
    process.stderr.write(`agent ${info.alias} is ${info.status}\n`);
    return 0;
  }
  return await new Promise<number>((resolve) => {
    const sub = client.agents.onOutput.subscribe(
      { agentId: page.agentId, lastEventId: String(lastEventId), format },
      {
        onData: ({ data }) => {
          printLines(data.lines.filter((l) => l.line >= next), !!values.raw);
          for (const l of data.lines) next = Math.max(next, l.line + 1);
          const end = data.events.find((e) => ["agent.idle", "agent.waiting", "agent.stopped", "agent.crashed", "agent.deleted"].includes(e.type));
          if (end) {
            process.stderr.write(`agent ${end.type.slice("agent.".length)}\n`);
            sub.unsubscribe();
            resolve(0);
          }
        },
        onError: (err) => {
          process.stderr.write(`${err.message}\n`);
          resolve(1);
        },
      },
    );
  });
}
