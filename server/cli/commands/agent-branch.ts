import { Option, type Command } from "commander";
import { plural } from "../io";
import { AGENT, AGENT_HELP, sweepTable } from "./agent-format";
import { examples, jsonOption, type Cli } from "./common";

/** merge, diff, sweep: the agent's branch and worktree. */
export function registerAgentBranch(agent: Command, cli: Cli): void {
  const merge = agent
    .command("merge")
    .description("bring an agent's branch into a branch (default: the one it started from)")
    .argument(AGENT, AGENT_HELP)
    .option("--into <branch>", "the target branch")
    .addOption(new Option("--strategy <how>", "how (default: merge)").choices(["merge", "squash", "rebase"]))
    .action(async (ref: string, opts: { into?: string; strategy?: "merge" | "squash" | "rebase"; json?: boolean }, self: Command) => {
      const r = await (await cli.client(self)).agents.merge.mutate({ agentId: ref, ...(opts.into ? { into: opts.into } : {}), ...(opts.strategy ? { strategy: opts.strategy } : {}) });
      if (opts.json) return cli.json(r);
      if (!r.merged) return cli.print(`Nothing merged: ${r.reason ?? "nothing new"}`);
      cli.print(`Merged ${r.branch} into ${r.into} as ${(r.commit ?? "").slice(0, 8)} (${r.strategy}, ${plural(r.commits, "commit")})`);
    });
  jsonOption(merge);
  examples(merge, "yard agent merge brave-otter --strategy squash", "yard agent merge brave-otter --into release");

  const diff = agent
    .command("diff")
    .description("the files an agent changed against its base (and the patch)")
    .argument(AGENT, AGENT_HELP)
    .option("--patch", "print the patch too")
    .action(async (ref: string, opts: { patch?: boolean; json?: boolean }, self: Command) => {
      const client = await cli.client(self);
      const changes = await client.agents.changes.query({ agentId: ref });
      const patch = opts.patch ? (await client.agents.diff.query({ agentId: ref })).patch : undefined;
      if (opts.json) return cli.json(patch === undefined ? changes : { ...changes, patch });
      const { green, red } = cli.style;
      for (const f of changes.files) cli.print(`${f.status} ${f.path} ${green(`+${f.insertions}`)} ${red(`-${f.deletions}`)}`);
      cli.print(`${plural(changes.files.length, "file")}, +${changes.insertions} -${changes.deletions}, ${plural(changes.commitsAhead, "commit")}${changes.dirty ? ", uncommitted changes" : ""}`);
      if (patch !== undefined) cli.io.stdout.write(patch);
    });
  jsonOption(diff);
  examples(diff, "yard agent diff brave-otter --patch | less");

  const sweep = agent
    .command("sweep")
    .description("disk used per worktree; removes the worktrees of merged, clean agents")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const rows = await (await cli.client(self)).agents.sweep.mutate();
      if (opts.json) return cli.json(rows);
      cli.print(sweepTable(rows, { width: cli.width, style: cli.style }));
    });
  jsonOption(sweep);
  examples(sweep, "yard agent sweep");
}
