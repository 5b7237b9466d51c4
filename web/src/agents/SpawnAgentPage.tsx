import { useState, type FormEvent } from "react";
import type { AgentMode, PermissionMode } from "../../../shared/agents";
import { accountStatusLabel } from "../accounts/AccountStatusBadge";
import { Button, fieldClass } from "../components/Button";
import { PageHeader } from "../components/PageHeader";
import { errorCode, errorMessage } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { parseLabels, placeableWorkers } from "../workers/worker-format";

const MODES: AgentMode[] = ["execute", "plan", "discuss", "refine", "review"];
const PERMISSIONS: Array<{ value: PermissionMode; label: string }> = [
  { value: "acceptEdits", label: "Accept edits (default)" },
  { value: "ask", label: "Ask me before tool calls" },
  { value: "bypass", label: "Bypass all permissions" },
];

/** `/agents/new`: start a CLI coding agent in its own worktree of a git repository. */
export default function SpawnAgentPage() {
  return (
    <>
      <PageHeader title="New agent" crumbs={<Link href="/agents" className="hover:underline">Agents</Link>} description="A coding agent (Claude Code, Codex, …) working on a task in its own git worktree, on branch switchyard/<alias>." />
      <SpawnForm />
    </>
  );
}

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
  // where it runs: "" any worker (the server's placement), "local", or a worker's name
  const [where, setWhere] = useState("");
  const [labels, setLabels] = useState("");
  const workers = trpc.workers.list.useQuery();
  const registered = (workers.data ?? []).filter((w) => w.state !== "revoked");
  const accounts = trpc.accounts.list.useQuery({});
  const forProvider = (accounts.data ?? []).filter((a) => a.provider === provider);
  // what `ask` means depends on the CLI: some route approvals to a human, others cannot ask
  const approvals = providers.data?.find((p) => p.name === provider)?.approvals;
  const [error, setError] = useState<string | null>(null);
  const start = (init: boolean) => {
    if (!prompt.trim()) return setError("Write a task for the agent.");
    if (!repo.trim()) return setError("Give the git repository the agent works on.");
    setError(null);
    const wanted = where === "local" ? [] : parseLabels(labels);
    const placement = registered.length > 0 ? { ...(where ? { worker: where } : {}), ...(wanted.length > 0 ? { labels: wanted } : {}) } : {};
    spawn.mutate({ provider, repo: repo.trim(), prompt, mode, permissionMode: permission, ...(init ? { init: true } : {}), ...(baseRef.trim() ? { baseRef: baseRef.trim() } : {}), ...(account ? { account } : {}), ...placement });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start(false);
  };
  const notGit = !error && errorCode(spawn.error) === "REPO_NOT_GIT";
  const label = "block text-sm font-medium text-zinc-700 dark:text-zinc-300";
  return (
    <form onSubmit={submit} data-testid="spawn-agent-form" className="mt-6 grid max-w-3xl gap-5 sm:grid-cols-2">
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
                {a.label}{a.status === "available" ? "" : ` (${accountStatusLabel(a.status)})`}
              </option>
            ))}
          </select>
        </label>
      )}
      {registered.length > 0 && (
        <div data-testid="spawn-where" className="grid grid-cols-2 gap-3 sm:col-span-2">
          <label className={label}>
            Where
            <select value={where} onChange={(e) => setWhere(e.target.value)} className={`${fieldClass} mt-1`}>
              <option value="">Any worker (default)</option>
              <option value="local">This server (local)</option>
              {placeableWorkers(registered).map((w) => (
                <option key={w.name} value={w.name}>
                  {w.name}{w.drained ? " (drained: it waits)" : ""}
                </option>
              ))}
            </select>
          </label>
          <label className={label}>
            Labels <span className="font-normal text-zinc-500">(optional)</span>
            <input value={labels} onChange={(e) => setLabels(e.target.value)} disabled={where === "local"} placeholder="gpu, big-disk" className={`${fieldClass} mt-1 font-mono disabled:opacity-50`} />
          </label>
          <p className="col-span-2 -mt-1 text-xs text-zinc-500 dark:text-zinc-400">
            Any worker: the least-loaded connected one with this CLI and every label; when none can take it, the agent is queued until one can. <Link href="/workers" className="underline">Workers</Link>
          </p>
        </div>
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
