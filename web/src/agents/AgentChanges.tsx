import { useEffect, useState } from "react";
import type { AgentMerge } from "../../../shared/agents";
import { Button } from "../components/Button";
import { errorMessage } from "../lib/errors";
import { plural } from "../lib/format";
import { trpc } from "../trpc";

/**
 * The worktree's changes against its base commit (committed, uncommitted, untracked) and the diff
 * on demand. Once merged, the merge button reads "Merged" until the branch has new commits, then
 * offers just those.
 */
export function AgentChanges({ agentId, live, version, worktreeRemoved, merge: merged }: { agentId: string; live: boolean; version: string; worktreeRemoved: boolean; merge: AgentMerge | null }) {
  const utils = trpc.useUtils();
  const merge = trpc.agents.merge.useMutation({
    onSuccess: () => {
      void changes.refetch();
      void utils.agents.get.invalidate({ agentId });
    },
  });
  const cleanup = trpc.agents.cleanup.useMutation({ onSuccess: () => void changes.refetch() });
  const cleanUp = (dirty: boolean) => {
    const question = dirty
      ? "Discard the uncommitted changes and remove the worktree? This cannot be undone."
      : "Remove the worktree? The branch is kept when it has commits; a follow-up message brings the worktree back.";
    if (window.confirm(question)) cleanup.mutate({ agentId, discard: dirty });
  };
  const changes = trpc.agents.changes.useQuery({ agentId }, { refetchInterval: live ? 3000 : false, retry: false });
  const [showDiff, setShowDiff] = useState(false);
  const diff = trpc.agents.diff.useQuery({ agentId }, { enabled: showDiff, retry: false });
  // every change of the agent (a turn ended, it resumed...) may have changed its files
  const { refetch } = changes;
  useEffect(() => void refetch(), [version, refetch]);
  if (changes.isError) return <p className="mt-4 text-sm text-zinc-500">Changes: {errorMessage(changes.error)}</p>;
  const c = changes.data;
  if (!c) return null;
  return (
    <section data-testid="agent-changes" className="mt-6">
      <div className="flex items-center justify-between">
        <h2 className="text-sm font-semibold text-zinc-800 dark:text-zinc-200">
          Changes{" "}
          <span className="font-normal text-zinc-500">
            {plural(c.files.length, "file")} · <span className="text-emerald-600">+{c.insertions}</span> <span className="text-red-600">−{c.deletions}</span> · {plural(c.commitsAhead, "commit")}{c.dirty ? " · uncommitted work" : ""}
          </span>
        </h2>
        <div className="flex items-center gap-2">
          {c.files.length > 0 && <Button variant="ghost" onClick={() => setShowDiff((v) => !v)}>{showDiff ? "Hide diff" : "Show diff"}</Button>}
          {!live && !worktreeRemoved && (
            <Button variant={c.dirty ? "danger" : "ghost"} onClick={() => cleanUp(c.dirty)} disabled={cleanup.isPending}>
              {c.dirty ? "Discard and clean up" : "Clean up worktree"}
            </Button>
          )}
          {c.commitsAhead > 0 && !live && <MergeButton merged={merged} since={c.commitsSinceMerge} pending={merge.isPending} onMerge={() => merge.mutate({ agentId })} />}
        </div>
      </div>
      {merge.data && (
        <p data-testid="merge-result" className="mt-2 text-sm text-emerald-700 dark:text-emerald-400">
          {merge.data.merged ? `Merged ${merge.data.branch} into ${merge.data.into} (${merge.data.commit?.slice(0, 8)})` : merge.data.reason}
        </p>
      )}
      {cleanup.error && (
        <div role="alert" className="mt-2 rounded-lg border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-900 dark:bg-red-950/40 dark:text-red-300">{errorMessage(cleanup.error)}</div>
      )}
      {merge.error && (
        <div role="alert" data-testid="merge-error" className="mt-2 rounded-lg border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-900 dark:bg-red-950/40 dark:text-red-300">
          {errorMessage(merge.error)}
        </div>
      )}
      {c.files.length > 0 && (
        <ul className="mt-2 divide-y divide-zinc-100 rounded-xl border border-zinc-200 font-mono text-xs dark:divide-zinc-800 dark:border-zinc-800">
          {c.files.map((f) => (
            <li key={f.path} className="flex justify-between px-3 py-1">
              <span><span className="mr-2 text-zinc-500">{f.status}</span>{f.path}</span>
              <span><span className="text-emerald-600">+{f.insertions}</span> <span className="text-red-600">−{f.deletions}</span></span>
            </li>
          ))}
        </ul>
      )}
      {showDiff && (
        <pre data-testid="agent-diff" className="mt-2 max-h-[50vh] overflow-auto rounded-xl bg-zinc-50 p-3 font-mono text-xs dark:bg-zinc-950">
          {diff.data
            ? diff.data.patch.split("\n").map((l, i) => (
                <span key={i} className={l.startsWith("+") && !l.startsWith("+++") ? "text-emerald-700 dark:text-emerald-400" : l.startsWith("-") && !l.startsWith("---") ? "text-red-700 dark:text-red-400" : l.startsWith("@@") ? "text-indigo-600" : ""}>
                  {l}
                  {"\n"}
                </span>
              ))
            : "Loading…"}
          {diff.data?.truncated && "\n… (cut: the diff is larger)"}
        </pre>
      )}
    </section>
  );
}

/** "Merge branch"; after a merge "Merged" (disabled) until new commits, then "Merge N new commits". */
function MergeButton({ merged, since, pending, onMerge }: { merged: AgentMerge | null; since: number | null; pending: boolean; onMerge: () => void }) {
  if (pending) return <Button variant="primary" disabled>Merging…</Button>;
  if (merged && since === 0) {
    return (
      <Button variant="secondary" disabled title={`Merged into ${merged.into} (${merged.strategy}, ${merged.commit.slice(0, 8)}): no commits since`}>
        Merged
      </Button>
    );
  }
  const label = merged && since ? `Merge ${plural(since, "new commit")}` : "Merge branch";
  return <Button variant="primary" onClick={onMerge}>{label}</Button>;
}
