import { InvalidArgumentError, Option, type Command } from "commander";
import type { AgentInfo } from "../../../shared/agents";
import { PROVIDER_NAMES } from "../../../shared/provider-names";
import { AGENT_STATUS_LABELS } from "../../../shared/status-labels";
import type { AgentStatus } from "../../../shared/statuses";
import type { SwitchyardClient } from "../../client";
import { plural } from "../io";
import { registerAgentBranch } from "./agent-branch";
import { AGENT, AGENT_HELP, agentLine, agentsTable, approvalsTable, describeAgent, outputText, spawnedText } from "./agent-format";
import { collect, examples, jsonOption, limitOptions, LIST_LIMIT, listRows, moreHint, required, wholeNumber, type Cli } from "./common";

const LIVE = new Set(["starting", "running"]);

type SpawnOptions = {
  provider: string;
  prompt: string;
  repo?: string;
  init?: boolean;
  base?: string;
  mode?: string;
  permission?: string;
  model?: string;
  alias?: string;
  taskId?: string;
  phaseId?: string;
  account?: string;
  grant?: string[];
  worker?: string;
  label?: string[];
  json?: boolean;
};

/** `--answer q1=TEXT`, repeatable: {q1: TEXT}. */
function answer(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const i = value.indexOf("=");
  if (i <= 0) throw new InvalidArgumentError(`--answer expects QUESTION_ID=TEXT, got "${value}"`);
  return { ...previous, [value.slice(0, i)]: value.slice(i + 1) };
}


/** The events that end `yard agent logs -f`, and how the last line names the agent's state. */
const FOLLOW_ENDS: Record<string, string> = {
  "agent.went_idle": "idle",
  "agent.questions_asked": "waiting",
  "agent.stopped": "stopped",
  "agent.crashed": "crashed",
  "agent.deleted": "deleted",
};
export function registerAgent(program: Command, cli: Cli): void {
  const agent = program.command("agent").description("CLI coding agents (Claude Code, Codex, Gemini...), each in its own git worktree");
  examples(agent, 'yard agent spawn --provider claude --repo ~/code/app --prompt "Fix the failing test"', "yard agent list");
  for (const register of [spawn, list, get, lifecycle, logs, approvals, registerAgentBranch]) register(agent, cli);
}

function spawn(agent: Command, cli: Cli): void {
  const cmd = agent
    .command("spawn")
    .description("start an agent on a task, in a new worktree on branch switchyard/<alias>")
    .addOption(required("--provider <name>", `the agent CLI: ${PROVIDER_NAMES.join(", ")} (fake: the demo, no key needed)`))
    .addOption(required("--prompt <text>", "the task"))
    .option("--repo <dir|url>", "the git repository to work on: a directory (default: this one) or a git URL (https://, ssh://, git://, user@host:path) the agent's machine clones with its own credentials and pushes its branch to")
    .option("--init", "make --repo a git repository first when it is a plain folder")
    .option("--base <ref>", "branch from this ref (default: the repository's HEAD)")
    .addOption(new Option("--mode <mode>", "what it is asked to do").choices(["execute", "plan", "discuss", "refine", "review"]))
    .addOption(new Option("--permission <mode>", "what it may do without asking (default: acceptEdits)").choices(["bypass", "acceptEdits", "ask"]))
    .option("--model <model>", "the model its CLI uses")
    .option("--alias <name>", "its name (default: a generated one): lowercase letters, digits and dashes")
    .option("--task-id <id>", "a task label other agents can ask it by (yard ask --task-id)")
    .option("--phase-id <id>", "a phase label other agents can ask it by")
    .option("--account <label>", "run it on this registered account (yard account list)")
    .option("--grant <right>", "give its token a right beyond itself and the agents it spawns: daemons (list, trigger, snapshot); repeatable", collect)
    .option("--worker <name>", 'run it on this worker (yard worker list), or "local": the server\'s machine (default: the least-loaded worker once one is registered)')
    .option("--label <label>", "only a worker with this label (yard worker --labels); repeatable", collect)
    .action(async (opts: SpawnOptions, self: Command) => {
      const spawned = await (await cli.client(self)).agents.spawn.mutate({
        provider: opts.provider,
        prompt: opts.prompt,
        repo: opts.repo ?? process.cwd(),
        baseRef: opts.base,
        ...(opts.init ? { init: true } : {}),
        mode: opts.mode as never,
        permissionMode: opts.permission as never,
        model: opts.model,
        alias: opts.alias,
        taskId: opts.taskId,
        phaseId: opts.phaseId,
        account: opts.account,
        ...(opts.grant ? { grants: opts.grant as never } : {}),
        ...(opts.worker ? { worker: opts.worker } : {}),
        ...(opts.label ? { labels: opts.label } : {}),
      });
      if (opts.json) return cli.json(spawned);
      cli.print(spawnedText(spawned, cli.style));
    });
  jsonOption(cmd);
  examples(cmd, 'yard agent spawn --provider fake --repo ~/code/app --prompt "Write a notes file"', 'yard agent spawn --provider codex --repo ~/notes --init --alias tidy --prompt "Tidy up" --json');
}

function list(agent: Command, cli: Cli): void {
  const cmd = agent
    .command("list")
    .description(`agents, newest first (the last ${LIST_LIMIT} unless --limit or --all), their status as the dashboard shows it ("Needs you" while one waits for your answers or a tool approval)`)
    .option("--status <status>", "only agents in this status, as listed (done, needs-you...) or stored (idle, needs_you...); repeatable", collect)
    .action(async (opts: { status?: string[]; json?: boolean; limit?: number; all?: boolean }, self: Command) => {
      const client = await cli.client(self);
      // "needs_you" is derived, not stored: the server keeps an agent in one of the statuses or needing you
      const wanted = (opts.status ?? []).map(storedStatus);
      const stored = wanted.filter((s) => s !== "needs_you") as AgentStatus[];
      const needsYou = stored.length < wanted.length;
      const filter = { ...(stored.length > 0 ? { status: stored } : {}), ...(needsYou ? { needsYou } : {}) };
      const { items: agents, more } = await listRows((page) => client.agents.list.query({ ...filter, ...page }), opts);
      const hint = async () => {
        if (!more) return;
        const counts = await client.agents.counts.query({});
        // "needs you" overlaps the statuses: its count adds up only alone
        const total = wanted.length === 0 ? counts.total : !needsYou ? stored.reduce((sum, s) => sum + (counts.byStatus[s] ?? 0), 0) : stored.length === 0 ? counts.needsYou : undefined;
        cli.note(moreHint("agent", total === undefined ? undefined : total - agents.length));
      };
      if (opts.json) return (cli.json(agents), await hint());
      cli.print(agentsTable(agents, { width: cli.width, style: cli.style }));
      await hint();
    });
  jsonOption(cmd);
  limitOptions(cmd, "agents");
  examples(cmd, "yard agent list", "yard agent list --limit 200", "yard agent list --status needs_you --status running --all --json");
}

/** A `--status` value as the stored status (or needs_you): "Done" and "done" are idle, "needs-you" is needs_you. */
export function storedStatus(text: string): string {
  const key = (s: string) => s.trim().toLowerCase().replace(/[\s-]+/g, "_");
  const byLabel = Object.entries(AGENT_STATUS_LABELS).find(([, label]) => key(label) === key(text));
  if (key(text) === "needs_you") return "needs_you";
  return byLabel ? byLabel[0] : key(text);
}

function get(agent: Command, cli: Cli): void {
  const cmd = agent
    .command("get")
    .description("an agent's status, branch, last merge, result and usage")
    .argument(AGENT, AGENT_HELP)
    .action(async (ref: string, opts: { json?: boolean }, self: Command) => {
      const client = await cli.client(self);
      const info = await client.agents.get.query({ agentId: ref });
      if (opts.json) return cli.json(info);
      // the commits since the last merge need git: asked only for a merged agent (null when unreadable)
      const since = info.merge ? await client.agents.changes.query({ agentId: info.id }).then((c) => c.commitsSinceMerge, () => null) : null;
      cli.print(describeAgent(info, since));
    });
  jsonOption(cmd, "print the whole record as JSON");
  examples(cmd, "yard agent get brave-otter", "yard agent get brave-otter --json | jq .result");
}

/** stop, resume, message, cleanup, delete: act on one agent, say what it is now. */
function lifecycle(agent: Command, cli: Cli): void {
  type Done = { json: unknown; text: string };
  const act = (name: string, description: string, example: string, run: (client: SwitchyardClient, ref: string, opts: Record<string, unknown>) => Promise<Done>, options: (cmd: Command) => void = () => {}) => {
    const cmd = agent.command(name).description(description).argument(AGENT, AGENT_HELP);
    options(cmd);
    cmd.action(async (ref: string, opts: Record<string, unknown>, self: Command) => {
      const { json, text } = await run(await cli.client(self), ref, opts);
      if (opts.json) return cli.json(json);
      cli.print(text);
    });
    jsonOption(cmd);
    examples(cmd, example);
  };
  const line = (verb: string, a: AgentInfo): Done => ({ json: a, text: agentLine(verb, a, cli.style) });

  act("stop", "stop a running agent (its worktree and branch stay)", "yard agent stop brave-otter", async (c, ref) => line("Stopped", await c.agents.stop.mutate({ agentId: ref })));

  act(
    "resume",
    "answer an agent's questions and let it go on",
    'yard agent resume brave-otter --answer q1=yes --answer q2="use port 8080"',
    async (c, ref, opts) => {
      const a = await c.agents.resume.mutate({ agentId: ref, answers: (opts.answer as Record<string, string> | undefined) ?? {} });
      // an interrupted agent no worker can take now waits for one
      return line(a.status === "queued" ? "Queued" : "Resumed", a);
    },
    (cmd) => cmd.option("--answer <id=text>", "the answer to one question, QUESTION_ID=TEXT (repeatable)", answer),
  );

  const message = agent
    .command("message")
    .description("send an agent a follow-up: now when it can take it, else at its next idle point")
    .argument(AGENT, AGENT_HELP)
    .argument("<text...>", "the message")
    .action(async (ref: string, words: string[], opts: { json?: boolean }, self: Command) => {
      const r = await (await cli.client(self)).agents.message.mutate({ agentId: ref, text: words.join(" ") });
      if (opts.json) return cli.json({ delivered: r.delivered, status: r.agent.status, queued: r.agent.queuedMessages.length });
      if (r.delivered === "now") return cli.print(`Delivered to ${r.agent.alias} (${r.agent.status})`);
      cli.print(`Queued for ${r.agent.alias} (${r.agent.status}): delivered when it is ready; ${plural(r.agent.queuedMessages.length, "message")} queued`);
    });
  jsonOption(message);
  examples(message, 'yard agent message brave-otter "Also update the changelog"');

  act(
    "cleanup",
    "remove an agent's worktree now (the branch is kept when it has commits)",
    "yard agent cleanup brave-otter --discard",
    async (c, ref, opts) => line("Cleaned up", await c.agents.cleanup.mutate({ agentId: ref, discard: opts.discard === true })),
    (cmd) => cmd.option("--discard", "throw away uncommitted work too"),
  );

  act(
    "delete",
    "delete an agent (stopped first when running), its worktree and its log",
    "yard agent delete brave-otter --force",
    async (c, ref, opts) => {
      const r = await c.agents.delete.mutate({ agentId: ref, force: opts.force === true });
      return { json: r, text: `Deleted ${r.deleted}` };
    },
    (cmd) => cmd.option("--force", "remove its worktree even with uncommitted work in it"),
  );
}

function logs(agent: Command, cli: Cli): void {
  const cmd = agent
    .command("logs")
    .description("an agent's output: the last lines, then live ones with --follow")
    .argument(AGENT, AGENT_HELP)
    .option("-f, --follow", "keep printing until the agent stops, waits or finishes")
    .option("--raw", "the CLI's own lines instead of normalized events")
    .option("--lines <n>", "how many lines before following", wholeNumber, 100)
    .option("--from <line>", "start at this line number instead of the last ones", wholeNumber)
    .option("--json", "one JSON object a line (line number, raw text, events)")
    .action(async (ref: string, opts: LogOptions, self: Command) => {
      cli.exitCode = await followLogs(cli, await cli.client(self), ref, opts);
    });
  examples(cmd, "yard agent logs brave-otter -f", "yard agent logs brave-otter --raw --from 0 --lines 500");
}

type LogOptions = { follow?: boolean; raw?: boolean; lines: number; from?: number; json?: boolean };

async function followLogs(cli: Cli, client: SwitchyardClient, agentId: string, opts: LogOptions): Promise<number> {
  const format = opts.raw ? "raw" : "events";
  const shown = opts.json ? "json" : format;
  const write = (text: string) => void cli.io.stdout.write(text);
  // the cursor is taken BEFORE the page is read: nothing can fall between the page and the stream
  const { lastEventId } = await client.system.info.query();
  const page = await client.agents.output.query({ agentId, limit: opts.lines, format, ...(opts.from !== undefined ? { fromLine: opts.from } : {}) });
  write(outputText(page.lines, shown));
  if (!opts.follow) return 0;
  let next = page.fromLine + page.lines.length;
  const info = await client.agents.get.query({ agentId: page.agentId });
  if (!LIVE.has(info.status)) {
    cli.note(`agent ${info.alias} is ${info.status}`);
    return 0;
  }
  return await new Promise<number>((resolve) => {
    const sub = client.agents.onOutput.subscribe(
      { agentId: page.agentId, lastEventId: String(lastEventId), format },
      {
        onData: ({ data }) => {
          write(outputText(data.lines.filter((l) => l.line >= next), shown));
          for (const l of data.lines) next = Math.max(next, l.line + 1);
          const end = data.events.find((e) => e.type in FOLLOW_ENDS);
          if (end) {
            cli.note(`agent ${FOLLOW_ENDS[end.type]}`);
            sub.unsubscribe();
            resolve(0);
          }
        },
        onError: (err) => {
          cli.note(err.message);
          resolve(1);
        },
      },
    );
  });
}

function approvals(agent: Command, cli: Cli): void {
  const cmd = agent
    .command("approvals")
    .description("tool approvals waiting for a decision (agents in --permission ask)")
    .argument("[agent]", "only this agent's (id or alias)")
    .action(async (ref: string | undefined, opts: { json?: boolean }, self: Command) => {
      const client = await cli.client(self);
      const pending = await client.agents.approvals.query({ agentId: ref, status: "pending" });
      if (opts.json) return cli.json(pending);
      // an agent with an approval pending needs you: those are the names to know
      const aliases = new Map((await client.agents.list.query({ needsYou: true })).items.map((a) => [a.id, a.alias]));
      cli.print(approvalsTable(pending, (id) => aliases.get(id) ?? id, { width: cli.width, style: cli.style }));
    });
  jsonOption(cmd);
  examples(cmd, "yard agent approvals", "yard agent approvals brave-otter --json");

  for (const [name, allow] of [
    ["approve", true],
    ["deny", false],
  ] as const) {
    const decide = agent
      .command(name)
      .description(allow ? "let an agent's tool call run" : "refuse an agent's tool call (the agent is told why)")
      .argument("<approval>", "the approval's id (yard agent approvals lists them)")
      .option("--message <text>", allow ? "a note for the agent" : "why, for the agent (default: denied by a user)")
      .action(async (approvalId: string, opts: { message?: string; json?: boolean }, self: Command) => {
        const r = await (await cli.client(self)).agents.decide.mutate({ approvalId, allow, message: opts.message });
        if (opts.json) return cli.json(r);
        cli.print(`${allow ? "Approved" : "Denied"} ${r.toolName} (${r.id})`);
      });
    jsonOption(decide);
    examples(decide, `yard agent ${name} 0196c3f5-...${allow ? "" : ' --message "not on main"'}`);
  }
}
