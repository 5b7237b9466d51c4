import { memo, useMemo } from "react";
import { useStickToBottom } from "../hooks/useStickToBottom";
import { describeUsage, formatTokens, plural } from "../lib/format";
import { CallView } from "./CallView";
import type { AgentCall, CallStatus, RequestEntry, RunView } from "./run-model";
import { agentsOf } from "./run-selectors";

type AgentSummary = ReturnType<typeof agentsOf>[number];

const DOT: Record<CallStatus, string> = {
  running: "bg-indigo-500 animate-pulse",
  waiting: "bg-amber-500 animate-pulse",
  completed: "bg-emerald-500",
  error: "bg-red-500",
  cancelled: "bg-zinc-400",
};

/**
 * Every agent's calls as it streams them: one card per agent (in flow order), filterable by
 * agent (a click on a graph node picks one). Cards follow their stream while scrolled down.
 */
export function AgentStreams({ view, order, selected, onSelect, loading }: { view: RunView; order: string[]; selected?: string; onSelect: (agent: string | undefined) => void; loading: boolean }) {
  const agents = useMemo(() => sortAgents(agentsOf(view), order), [view, order]);
  const shown = selected ? agents.filter((a) => a.agentName === selected) : agents;
  const multiSegment = view.segments.length > 1;

  return (
    <section id="agent-streams" aria-labelledby="agent-streams-title" className="scroll-mt-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="agent-streams-title" className="text-sm font-semibold">
          Agents
        </h2>
        {agents.length > 1 && (
          <div role="group" aria-label="Show the stream of" className="flex flex-wrap gap-1.5">
            <Chip pressed={!selected} onClick={() => onSelect(undefined)} label="All agents" />
            {agents.map((a) => (
              <Chip key={a.agentName} pressed={selected === a.agentName} onClick={() => onSelect(selected === a.agentName ? undefined : a.agentName)} label={a.agentName} dot={DOT[a.status]} />
            ))}
          </div>
        )}
      </div>
      {agents.length === 0 ? (
        <p className="mt-3 rounded-xl border border-dashed border-zinc-300 px-6 py-8 text-center text-sm text-zinc-500 dark:border-zinc-700 dark:text-zinc-400">
          {loading ? "Loading the run's events…" : "No agent has started yet. Their output streams in here, live."}
        </p>
      ) : shown.length === 0 ? (
        <p className="mt-3 text-sm text-zinc-500">
          {selected} has not run yet.{" "}
          <button type="button" onClick={() => onSelect(undefined)} className="font-medium text-indigo-600 hover:underline dark:text-indigo-400">
            Show all agents
          </button>
        </p>
      ) : (
        <div className={`mt-3 grid items-start gap-4 ${shown.length > 1 ? "xl:grid-cols-2" : ""}`}>
          {shown.map((a) => (
            <AgentCard key={a.agentName} agent={a} requests={view.requests} multiSegment={multiSegment} />
          ))}
        </div>
      )}
    </section>
  );
}

function sortAgents(agents: AgentSummary[], order: string[]): AgentSummary[] {
  const rank = (name: string) => {
    const i = order.indexOf(name);
    return i < 0 ? order.length : i;
  };
  return [...agents].sort((a, b) => rank(a.agentName) - rank(b.agentName));
}

function Chip({ pressed, onClick, label, dot }: { pressed: boolean; onClick: () => void; label: string; dot?: string }) {
  return (
    <button
      type="button"
      data-testid="agent-filter"
      aria-pressed={pressed}
      onClick={onClick}
      className="inline-flex items-center gap-1.5 rounded-full border border-zinc-200 bg-white px-2.5 py-0.5 text-xs text-zinc-600 hover:border-zinc-300 aria-pressed:border-indigo-500 aria-pressed:bg-indigo-50 aria-pressed:text-indigo-700 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400 dark:aria-pressed:border-indigo-400 dark:aria-pressed:bg-indigo-400/10 dark:aria-pressed:text-indigo-300"
    >
      {dot && <span className={`size-1.5 rounded-full ${dot}`} aria-hidden="true" />}
      {label}
    </button>
  );
}

const AgentCard = memo(function AgentCard({ agent, requests, multiSegment }: { agent: AgentSummary; requests: Record<string, RequestEntry>; multiSegment: boolean }) {
  const { box, content, onScroll } = useStickToBottom<HTMLDivElement, HTMLDivElement>();
  const model = agent.calls.findLast((c: AgentCall) => c.model)?.model;
  const tokens = agent.usage.promptTokens + agent.usage.completionTokens;
  return (
    <section data-testid="agent-stream" data-agent={agent.agentName} data-status={agent.status} aria-label={`${agent.agentName} output`} className="flex min-w-0 flex-col overflow-hidden rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <header className="flex items-center gap-2 border-b border-zinc-200 px-4 py-2.5 dark:border-zinc-800">
        <span className={`size-2 shrink-0 rounded-full ${DOT[agent.status]}`} aria-hidden="true" />
        <h3 className="truncate text-sm font-semibold">{agent.agentName}</h3>
        {model && <span className="truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">{model}</span>}
        <span className="ml-auto shrink-0 text-xs text-zinc-500 tabular-nums dark:text-zinc-400" title={describeUsage(agent.usage)}>
          {plural(agent.calls.length, "call")}
          {tokens > 0 && <span data-testid="agent-usage"> · {formatTokens(tokens)} tokens</span>}
        </span>
      </header>
      <div ref={box} onScroll={onScroll} tabIndex={0} aria-label={`${agent.agentName} stream`} className="max-h-[30rem] overflow-y-auto [overflow-anchor:none] focus-visible:-outline-offset-2">
        <div ref={content}>
          {agent.calls.map((call) => (
            <CallView key={call.key} call={call} requests={requests} showSegment={multiSegment} />
          ))}
        </div>
      </div>
    </section>
  );
});
