import { useState, type FormEvent } from "react";
import type { AgentMode, PermissionMode } from "../../../shared/agents";
import { Button, fieldClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { AgentsIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { errorCode, errorMessage } from "../lib/errors";
import { formatBytes, formatRelative } from "../lib/format";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { AgentStatusBadge } from "./AgentStatusBadge";
import { MergedBadge } from "./MergedBadge";
import { useAgentsLiveRefresh } from "./useAgentsLiveRefresh";

export function AgentsListPage() {
  const utils = trpc.useUtils();
  const agents = trpc.agents.list.useQuery({});
  useAgentsLiveRefresh(() => void utils.agents.list.invalidate());
  const now = useNow((agents.data ?? []).some((a) => a.status === "running"));
  const [showForm, setShowForm] = useState(false);
  const list = agents.data ?? [];
  return (
    <>
      <PageHeader
        title="Agents"
        description="Coding agents (Claude Code, Codex, …), each in its own git worktree: output, questions and results, live."
        actions={<Button variant="primary" onClick={() => setShowForm((v) => !v)}>{showForm ? "Close" : "New agent"}</Button>}
      />
      {showForm && <SpawnForm />}
      {agents.isPending ? (
        <p className="mt-6 text-sm text-zinc-500">Loading agents…</p>
      ) : agents.isError && !agents.data ? (
        <QueryError title="Cannot load the agents" error={agents.error} onRetry={() => void agents.refetch()} />
      ) : list.length === 0 ? (
        !showForm && (
          <EmptyState Icon={AgentsIcon} title="No agents yet" action={<Button variant="primary" onClick={() => setShowForm(true)}>Start an agent</Button>}>
            Start one here or with <Cmd>yard agent spawn --provider claude --prompt "..."</Cmd>. The <b>fake</b> provider works without any API key.
          </EmptyState>
        )
      ) : (
        <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <table data-testid="agents-table" className="w-full min-w-[60rem] text-left text-sm">
            <thead className="border-b border-zinc-200 text-xs text-zinc-500 uppercase dark:border-zinc-800">
              <tr>
                <th className="px-4 py-2 font-medium">Agent</th>
                <th className="px-4 py-2 font-medium">Status</th>
                <th className="px-4 py-2 font-medium">Task</th>
                <th className="px-4 py-2 font-medium">Worktree</th>
                <th className="px-4 py-2 font-medium">Account</th>
                <th className="px-4 py-2 text-right font-medium">Disk</th>
                <th className="px-4 py-2 text-right font-medium">Lines</th>
                <th className="px-4 py-2 text-right font-medium">Started</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
              {list.map((a) => (
                <tr key={a.id} data-testid="agent-row" className="hover:bg-zinc-50 dark:hover:bg-zinc-800/40">
                  <td className="px-4 py-2.5">
                    <Link href={`/agents/${a.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-300">{a.alias}</Link>
                    <div className="text-xs text-zinc-500">{a.provider}</div>
                  </td>
                  <td className="px-4 py-2.5"><AgentStatusBadge status={a.status} needsYou={a.needsYou} /></td>
                  <td className="max-w-md truncate px-4 py-2.5 text-zinc-700 dark:text-zinc-300" title={a.task}>{a.task.split("\n")[0]}</td>
                  <td className="px-4 py-2.5 font-mono text-xs text-zinc-600 dark:text-zinc-400">
                    {a.branch ?? "(plain directory)"}
                    {a.merge && <div className="mt-0.5 font-sans"><MergedBadge merge={a.merge} now={now} compact /></div>}
                    {a.workspaceRemoved && <div className="font-sans text-zinc-400" title="The worktree was removed once the agent finished; a follow-up brings it back">cleaned up</div>}
                    {a.cleanupWarning && <div className="font-sans text-amber-600 dark:text-amber-400" title={a.cleanupWarning}>uncommitted work kept</div>}
                  </td>
                  <td className="px-4 py-2.5 text-xs text-zinc-600 dark:text-zinc-400">{a.accountLabel ?? <span className="text-zinc-400">server env</span>}</td>
                  <td className="px-4 py-2.5 text-right text-xs tabular-nums text-zinc-600 dark:text-zinc-400" title="Measured by the periodic sweep">{a.diskBytes === null ? "–" : formatBytes(a.diskBytes)}</td>
                  <td className="px-4 py-2.5 text-right tabular-nums text-zinc-600 dark:text-zinc-400">{a.lineCount.toLocaleString()}</td>
                  <td className="px-4 py-2.5 text-right text-zinc-500">{formatRelative(a.createdAt, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

const MODES: AgentMode[] = ["execute", "plan", "discuss", "refine", "review"];
const PERMISSIONS: Array<{ value: PermissionMode; label: string }> = [
  { value: "acceptEdits", label: "Accept edits (default)" },
  { value: "ask", label: "Ask me before tool calls" },
  { value: "bypass", label: "Bypass all permissions" },
];

function SpawnForm() {
  const providers = trpc.agents.providers.useQuery();
  const info = trpc.system.info.useQuery();
  const spawn = trpc.agents.spawn.useMutation({ onSuccess: (a) => navigate(`/agents/${a.id}`) });
  const [provider, setProvider] = useState("fake");
  const [repo, setRepo] = useState("");
  const [baseRef, setBaseRef] = useState("");
  const [prompt, setPrompt] = useState("");
  const [mode, setMode] = useState<AgentMode>("execute");
  const [permission, setPermission] = useState<PermissionMode>("acceptEdits");
  const [account, setAccount] = useState("");
  const accounts = trpc.accounts.list.useQuery({});
  const forProvider = (accounts.data ?? []).filter((a) => a.provider === provider);
  // what `ask` means depends on the CLI: some route approvals to a human, others cannot ask
  const approvals = providers.data?.find((p) => p.name === provider)?.approvals;
  const [error, setError] = useState<string | null>(null);
  const start = (init: boolean) => {
    if (!prompt.trim()) return setError("Write a task for the agent.");
    if (!repo.trim()) return setError("Give the git repository the agent works on.");
    setError(null);
    spawn.mutate({ provider, repo: repo.trim(), prompt, mode, permissionMode: permission, ...(init ? { init: true } : {}), ...(baseRef.trim() ? { baseRef: baseRef.trim() } : {}), ...(account ? { account } : {}) });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start(false);
  };
  const notGit = !error && errorCode(spawn.error) === "REPO_NOT_GIT";
  const label = "block text-sm font-medium text-zinc-700 dark:text-zinc-300";
  return (
    <form onSubmit={submit} data-testid="spawn-agent-form" className="mt-6 grid gap-4 rounded-xl border border-zinc-200 bg-white p-5 shadow-sm sm:grid-cols-2 dark:border-zinc-800 dark:bg-zinc-900/60">
      <label className={label}>
        Provider
        <select value={provider} onChange={(e) => setProvider(e.target.value)} className={`${fieldClass} mt-1`}>
          {(providers.data ?? [{ name: "fake", displayName: "Fake agent (demo)", available: true }]).map((p) => (
            <option key={p.name} value={p.name} disabled={!p.available}>
              {p.displayName}{p.available ? "" : " (not installed)"}
            </option>
          ))}
        </select>
      </label>
      <label className={label}>
        Git repository
        <input value={repo} onChange={(e) => setRepo(e.target.value)} placeholder={info.data?.home ? "/path/to/your/repo" : ""} className={`${fieldClass} mt-1 font-mono`} />
      </label>
      <label className={`${label} sm:col-span-2`}>
        Task
        <textarea value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={4} placeholder="What should the agent do?" className={`${fieldClass} mt-1`} />
      </label>
      <label className={label}>
        Base branch or ref
        <input value={baseRef} onChange={(e) => setBaseRef(e.target.value)} placeholder="current HEAD" className={`${fieldClass} mt-1 font-mono`} />
      </label>
      <div className="grid grid-cols-2 gap-3">
        <label className={label}>
          Mode
          <select value={mode} onChange={(e) => setMode(e.target.value as AgentMode)} className={`${fieldClass} mt-1`}>
            {MODES.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
        <label className={label}>
          Permissions
          <select value={permission} onChange={(e) => setPermission(e.target.value as PermissionMode)} className={`${fieldClass} mt-1`}>
            {PERMISSIONS.map((p) => <option key={p.value} value={p.value}>{p.label}</option>)}
          </select>
        </label>
        {permission === "ask" && approvals && (
          <p data-testid="ask-means" data-human={approvals.human} className={`col-span-2 text-xs ${approvals.human ? "text-zinc-500" : "text-amber-700 dark:text-amber-400"}`}>
            {approvals.askMeans}
          </p>
        )}
      </div>
      {forProvider.length > 0 && (
        <label className={label}>
          Account
          <select value={account} onChange={(e) => setAccount(e.target.value)} className={`${fieldClass} mt-1`}>
            <option value="">Least recently used</option>
            {forProvider.map((a) => (
              <option key={a.id} value={a.label}>
                {a.label}{a.status === "available" ? "" : ` (${a.status})`}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="flex items-center gap-3 sm:col-span-2">
        <Button type="submit" variant="primary" disabled={spawn.isPending}>{spawn.isPending ? "Starting…" : "Start agent"}</Button>
        {(error ?? spawn.error) && <p role="alert" className="text-sm text-red-600 dark:text-red-400">{error ?? errorMessage(spawn.error)}</p>}
        {notGit && (
          <Button type="button" onClick={() => start(true)} disabled={spawn.isPending}>
            Make it a git repository and start
          </Button>
        )}
      </div>
    </form>
  );
}
