import { useMemo, useState } from "react";
import { primaryLinkClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { AgentsIcon, PlusIcon } from "../components/icons";
import { ListFooter } from "../components/ListFooter";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { formatBytes, formatRelative } from "../lib/format";
import { Link } from "../router/Link";
import { trpc, type RouterOutputs } from "../trpc";
import { treeOrder } from "./agent-tree";
import { AgentStatusBadge } from "./AgentStatusBadge";
import { MergedBadge } from "./MergedBadge";
import { useAgentsLiveRefresh } from "./useAgentsLiveRefresh";

type AgentSummary = RouterOutputs["agents"]["list"]["items"][number];

const SpawnLink = ({ label }: { label: string }) => (
  <Link href="/agents/new" className={primaryLinkClass}>
    <PlusIcon width={15} height={15} />
    {label}
  </Link>
);

/** Agents a page of the list brings (the first one is what a cold load waits for). */
const PAGE = 50;

/** `/agents`: the CLI agents, newest first, a page at a time as the reader scrolls; refreshed when an agent event arrives on the live stream. */
export function AgentsListPage() {
  const utils = trpc.useUtils();
  const agents = trpc.agents.list.useInfiniteQuery({ limit: PAGE }, { getNextPageParam: (page) => page.nextCursor });
  const counts = trpc.agents.counts.useQuery({});
  useAgentsLiveRefresh(() => {
    void utils.agents.list.invalidate();
    void utils.agents.counts.invalidate();
  });
  const list = useMemo(() => agents.data?.pages.flatMap((p) => p.items) ?? [], [agents.data]);
  return (
    <>
      <PageHeader
        title="Agents"
        description="Coding agents (Claude Code, Codex, …), each in its own git worktree: output, questions and results, live."
        actions={list.length > 0 ? <SpawnLink label="New agent" /> : undefined}
      />
      {agents.isPending ? (
        <p aria-busy="true" className="mt-6 text-sm text-zinc-500 dark:text-zinc-400">Loading agents…</p>
      ) : agents.isError && !agents.data ? (
        <QueryError title="Cannot load the agents" error={agents.error} onRetry={() => void agents.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState Icon={AgentsIcon} title="No agents yet" action={<SpawnLink label="Start an agent" />}>
          Start one here or with <Cmd>yard agent spawn --provider claude --prompt "..."</Cmd>. The <b>fake</b> provider works without any API key.
        </EmptyState>
      ) : (
        <>
          <AgentsTable agents={list} />
          <ListFooter shown={list.length} total={counts.data?.total} noun="agents" more={agents.hasNextPage} loading={agents.isFetchingNextPage} loadMore={() => void agents.fetchNextPage()} />
        </>
      )}
    </>
  );
}

function AgentsTable({ agents }: { agents: readonly AgentSummary[] }) {
  const now = useNow(agents.some((a) => a.status === "running"));
  const th = "px-4 py-2.5 font-medium whitespace-nowrap";
  const hasTrees = agents.some((a) => a.parentAgentId !== null);
  const [grouped, setGrouped] = useState(true);
  const rows = hasTrees && grouped ? treeOrder(agents) : agents.map((agent) => ({ agent, depth: 0 }));
  // where each runs, once any runs on a worker (a Host column would not fit 1440 px: it is in the subtitle)
  const hosts = agents.some((a) => a.worker !== null);
  return (
    <>
    {hasTrees && (
      <label className="mt-4 inline-flex items-center gap-2 text-sm text-zinc-600 dark:text-zinc-400">
        <input type="checkbox" data-testid="group-by-tree" checked={grouped} onChange={(e) => setGrouped(e.target.checked)} />
        Group by tree (agents under the agent that spawned them)
      </label>
    )}
    <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <table data-testid="agents-table" className="w-full min-w-[60rem] text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs font-medium text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
          <tr>
            <th scope="col" className={th}>Agent</th>
            <th scope="col" className={th}>Status</th>
            <th scope="col" className={`${th} w-full`}>Task</th>
            <th scope="col" className={th}>Worktree</th>
            <th scope="col" className={th}>Account</th>
            <th scope="col" className={`${th} text-right`}>Disk</th>
            <th scope="col" className={`${th} text-right`}>Lines</th>
            <th scope="col" className={`${th} text-right`}>Started</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {rows.map(({ agent, depth }) => (
            <AgentRow key={agent.id} agent={agent} depth={depth} now={now} hosts={hosts} />
          ))}
        </tbody>
      </table>
    </div>
    </>
  );
}

/** One agent; no cell wraps (long names and the task are cut, in full on hover). */
function AgentRow({ agent: a, depth, now, hosts }: { agent: AgentSummary; depth: number; now: number; hosts: boolean }) {
  const muted = "text-zinc-600 dark:text-zinc-400";
  return (
    <tr data-testid="agent-row" data-depth={depth} className="hover:bg-zinc-50 dark:hover:bg-zinc-800/40">
      <td className="px-4 py-2.5 whitespace-nowrap">
        <div style={{ paddingLeft: `${depth * 1.25}rem` }} className="flex items-start gap-1">
          {depth > 0 && <span aria-hidden="true" className="text-zinc-400">↳</span>}
          <div className="min-w-0">
            <Link href={`/agents/${a.id}`} title={a.alias} className="block max-w-44 truncate font-medium text-indigo-700 hover:underline dark:text-indigo-300">{a.alias}</Link>
            <div className="max-w-44 truncate text-xs text-zinc-500">
              {a.provider}
              {hosts && <> · <AgentHost worker={a.worker} /></>}
            </div>
          </div>
        </div>
      </td>
      <td className="px-4 py-2.5 whitespace-nowrap"><AgentStatusBadge status={a.status} needsYou={a.needsYou} /></td>
      {/* the task takes the room the other columns leave (at least 10rem), cut to one line */}
      <td className="relative px-4 py-2.5">
        <span aria-hidden="true" className="block w-40" />
        <span className="absolute inset-x-4 top-1/2 -translate-y-1/2 truncate text-zinc-700 dark:text-zinc-300" title={a.task}>{a.task.split("\n")[0]}</span>
      </td>
      <td className={`px-4 py-2.5 font-mono text-xs whitespace-nowrap ${muted}`}>
        <div className="max-w-52 truncate" title={a.branch ?? a.workspacePath}>{a.branch ?? "(plain directory)"}</div>
        {a.merge && <div className="mt-0.5 font-sans"><MergedBadge merge={a.merge} now={now} compact /></div>}
        {a.workspaceRemoved && <div className="font-sans text-zinc-400" title="The worktree was removed once the agent finished; a follow-up brings it back">Cleaned up</div>}
        {a.cleanupWarning && <div className="font-sans text-amber-600 dark:text-amber-400" title={a.cleanupWarning}>Uncommitted work kept</div>}
      </td>
      <td className={`px-4 py-2.5 text-xs whitespace-nowrap ${muted}`}>{a.accountLabel ?? <span className="text-zinc-400">server env</span>}</td>
      <td className={`px-4 py-2.5 text-right text-xs whitespace-nowrap tabular-nums ${muted}`} title="Measured by the periodic sweep">{a.diskBytes === null ? "–" : formatBytes(a.diskBytes)}</td>
      <td className={`px-4 py-2.5 text-right whitespace-nowrap tabular-nums ${muted}`}>{a.lineCount.toLocaleString()}</td>
      <td className="px-4 py-2.5 text-right whitespace-nowrap text-zinc-500">
        <time dateTime={a.createdAt} title={new Date(a.createdAt).toLocaleString()}>{formatRelative(a.createdAt, now)}</time>
      </td>
    </tr>
  );
}

/** The worker an agent runs on (its page is /workers), or "local": the server's own machine. */
function AgentHost({ worker }: { worker: string | null }) {
  if (!worker) return <span data-testid="agent-host" className="text-zinc-400 dark:text-zinc-500" title="On this server's machine">local</span>;
  return (
    <Link data-testid="agent-host" href="/workers" title={`On worker ${worker}`} className="text-zinc-600 hover:underline dark:text-zinc-400">
      {worker}
    </Link>
  );
}
