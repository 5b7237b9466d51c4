import { skipToken } from "@tanstack/react-query";
import { useMemo } from "react";
import type { AgentDef } from "../../../shared/strategy";
import { AlertIcon } from "../components/icons";
import { QueryError } from "../components/QueryError";
import { trpc } from "../trpc";
import { FlowGraph } from "./FlowGraph";
import { cycleLimitsOf } from "./flow-tree";

/** The chosen strategy: description, warnings, agents and its flow graph. */
export function StrategyPreview({ path, cwd }: { path: string | undefined; cwd: string | undefined }) {
  const strategy = trpc.strategies.get.useQuery(path ? { path, ...(cwd ? { cwd } : {}) } : skipToken, { retry: false });
  const limits = useMemo(() => cycleLimitsOf(strategy.data?.flowTree), [strategy.data]);

  if (!path) {
    return <p className="px-4 py-10 text-center text-sm text-zinc-500 dark:text-zinc-400">Choose a strategy to see its agents and flow.</p>;
  }
  if (strategy.isPending) {
    return (
      <div aria-busy="true" aria-label="Loading the strategy" className="space-y-3 p-4">
        {[70, 90, 50].map((w) => (
          <div key={w} className="h-4 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" style={{ width: `${w}%` }} />
        ))}
        <div className="h-32 animate-pulse rounded-lg bg-zinc-100 dark:bg-zinc-800" />
      </div>
    );
  }
  if (strategy.isError) {
    return (
      <div className="p-4">
        <QueryError title="This strategy cannot be loaded" error={strategy.error} onRetry={() => void strategy.refetch()} hint="Fix the file (the message names the line), then try again." />
      </div>
    );
  }
  const { strategy: s, graph, warnings } = strategy.data;
  return (
    <div data-testid="strategy-preview" className="space-y-4 p-4">
      <div>
        <h3 className="text-sm font-semibold">
          {s.name} <span className="font-normal text-zinc-500 dark:text-zinc-400">v{s.version}</span>
        </h3>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{s.description ?? "No description."}</p>
        <p className="mt-1 truncate font-mono text-xs text-zinc-400 dark:text-zinc-500" title={strategy.data.path}>
          {strategy.data.path}
        </p>
      </div>
      {warnings.length > 0 && (
        <ul data-testid="strategy-warnings" className="space-y-1 rounded-lg border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200">
          {warnings.map((w, i) => (
            <li key={i} className="flex gap-1.5">
              <AlertIcon width={13} height={13} className="mt-px shrink-0" />
              <span>
                {w.path && <code className="mr-1">{w.path}</code>}
                {w.message}
              </span>
            </li>
          ))}
        </ul>
      )}
      <div className="rounded-lg border border-zinc-200 bg-zinc-50/50 p-2 dark:border-zinc-800 dark:bg-zinc-950/30">
        <FlowGraph graph={graph} limits={limits} label={`Flow of ${s.name}`} />
      </div>
      <ul className="divide-y divide-zinc-100 text-sm dark:divide-zinc-800">
        {Object.entries(s.agents).map(([name, agent]) => (
          <li key={name} className="flex items-baseline justify-between gap-3 py-1.5">
            <span className="min-w-0">
              <span className="font-medium">{name}</span>
              {agent.description && <span className="ml-2 text-xs text-zinc-500 dark:text-zinc-400">{agent.description}</span>}
            </span>
            <span className="shrink-0 font-mono text-xs text-zinc-500 dark:text-zinc-400">{agentKind(agent)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function agentKind(agent: AgentDef): string {
  if ("model" in agent && typeof agent.model === "string") return agent.model + (agent.tools?.length ? ` · ${agent.tools.join(", ")}` : "");
  return agent.type ?? "llm";
}
