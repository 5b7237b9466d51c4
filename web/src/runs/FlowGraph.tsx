import { memo, useId, useMemo, type KeyboardEvent } from "react";
import type { FlowGraph as Graph } from "../../../shared/strategy";
import { layoutFlowGraph, type LayoutBox, type LayoutEdge } from "./flow-layout";
import { navigate } from "../router/history";
import type { CliAgentRef, NodeStatus } from "./run-model";

type Props = {
  graph: Graph;
  /** Live status of each node (absent = pending); without it, a plain preview. */
  statuses?: Record<string, NodeStatus>;
  /** Latest pass of each cycle node. */
  passes?: Record<string, number>;
  /** Pass limit of each cycle node (`cycles`). */
  limits?: Record<string, number>;
  selectedAgent?: string;
  onSelectAgent?: (agent: string) => void;
  label?: string;
  /** CLI agents running `type: cli` nodes: provider, branch, and a link to the agent's page. */
  cliAgents?: Record<string, CliAgentRef>;
};

/** `text`: the node's status, in the words of the run's status badges (RunStatusBadge). */
const NODE_STYLE: Record<NodeStatus, { box: string; dot: string; text: string }> = {
  pending: { box: "fill-white stroke-zinc-300 dark:fill-zinc-900 dark:stroke-zinc-700", dot: "fill-zinc-300 dark:fill-zinc-600", text: "Pending" },
  running: { box: "fill-indigo-50 stroke-indigo-500 dark:fill-indigo-950/60 dark:stroke-indigo-400", dot: "fill-indigo-500 animate-pulse dark:fill-indigo-400", text: "Running" },
  waiting: { box: "fill-amber-50 stroke-amber-500 dark:fill-amber-950/40 dark:stroke-amber-400", dot: "fill-amber-500 animate-pulse", text: "Needs you" },
  completed: { box: "fill-white stroke-emerald-500/70 dark:fill-zinc-900 dark:stroke-emerald-500/60", dot: "fill-emerald-500", text: "Completed" },
  error: { box: "fill-red-50 stroke-red-500 dark:fill-red-950/40 dark:stroke-red-400", dot: "fill-red-500", text: "Failed" },
};

const EDGE_STYLE: Record<LayoutEdge["kind"], string> = {
  next: "stroke-zinc-300 dark:stroke-zinc-600",
  fanout: "stroke-zinc-300 dark:stroke-zinc-600",
  fanin: "stroke-zinc-300 dark:stroke-zinc-600",
  observe: "stroke-violet-400/80 dark:stroke-violet-400/60",
  loop: "stroke-violet-400/80 dark:stroke-violet-400/60",
};

/** A graph shrinks to fit its box, down to this scale (or width); then it scrolls sideways (labels stay legible). */
const MIN_SCALE = 0.6;
const MIN_WIDTH = 280;

let measureCtx: CanvasRenderingContext2D | null | undefined;

/** The width of `text` in the page's sans font at this size and weight, or undefined without a canvas. */
function textWidth(text: string, sizePx: number, weight: number, letterSpacingEm = 0): number | undefined {
  if (measureCtx === undefined) measureCtx = typeof document === "undefined" ? null : document.createElement("canvas").getContext("2d");
  if (!measureCtx) return undefined;
  measureCtx.font = `${weight} ${sizePx}px ${getComputedStyle(document.body).fontFamily}`;
  return measureCtx.measureText(text).width + letterSpacingEm * sizePx * text.length;
}

/**
 * `text` as it fits in `px` (measured in the page's font; else estimated at `charPx` a character),
 * cut with an ellipsis only when it does not fit.
 */
const fit = (text: string, px: number, font: { size: number; weight: number; spacingEm?: number; upper?: boolean }, charPx: number) => {
  const shown = (t: string) => (font.upper ? t.toUpperCase() : t);
  const width = (t: string) => textWidth(shown(t), font.size, font.weight, font.spacingEm);
  const measured = width(text);
  if (measured === undefined) {
    const max = Math.max(3, Math.floor(px / charPx));
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }
  if (measured <= px) return text;
  let end = text.length - 1;
  while (end > 2 && (width(`${text.slice(0, end)}…`) ?? 0) > px) end--;
  return `${text.slice(0, end).trimEnd()}…`;
};

/**
 * The flow of a strategy as an SVG: agents as nodes (`data-testid="flow-node"` with their live
 * `data-status`), nested flows as boxes, every edge a `<path data-testid="flow-edge">`.
 * Clicking an agent (or Enter on it) selects it.
 */
export const FlowGraph = memo(function FlowGraph({ graph, statuses, passes, limits, selectedAgent, onSelectAgent, label = "Flow graph", cliAgents }: Props) {
  const layout = useMemo(() => layoutFlowGraph(graph), [graph]);
  const markerId = `arrow-${useId().replace(/:/g, "")}`;
  const containers = layout.boxes.filter((b) => b.kind !== "agent");
  const agents = layout.boxes.filter((b) => b.kind === "agent");
  const active = (id: string) => statuses?.[id] === "running" || statuses?.[id] === "waiting";

  return (
    <div className="overflow-x-auto">
      <svg
        data-testid="flow-graph"
        role="group"
        aria-label={label}
        width="100%"
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        style={{ maxWidth: layout.width, minWidth: Math.min(layout.width, Math.max(MIN_WIDTH, layout.width * MIN_SCALE)) }}
        className="mx-auto block font-sans"
      >
        <defs>
          <marker id={markerId} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">
            <path d="M 0 1 L 9 5 L 0 9 z" className="fill-zinc-400 dark:fill-zinc-500" />
          </marker>
        </defs>
        {containers.map((box) => (
          <FlowBox key={box.id} box={box} pass={passes?.[box.id]} limit={limits?.[box.id]} />
        ))}
        {layout.edges.map((edge, i) => (
          <path
            key={`${edge.from}>${edge.to}>${i}`}
            data-testid="flow-edge"
            data-kind={edge.kind}
            data-from={edge.from}
            data-to={edge.to}
            d={edge.d}
            fill="none"
            strokeWidth={active(edge.to) ? 2 : 1.5}
            strokeDasharray={edge.kind === "observe" || edge.kind === "loop" ? "5 4" : undefined}
            markerEnd={edge.kind === "fanin" ? undefined : `url(#${markerId})`}
            className={active(edge.to) ? "stroke-indigo-400 dark:stroke-indigo-400" : EDGE_STYLE[edge.kind]}
          />
        ))}
        {agents.map((box) => (
          <AgentNode key={box.id} box={box} status={statuses?.[box.id] ?? "pending"} live={!!statuses} selected={!!box.agent && box.agent === selectedAgent} onSelect={onSelectAgent} cli={cliAgents?.[box.id]} />
        ))}
      </svg>
    </div>
  );
});

function FlowBox({ box, pass, limit }: { box: LayoutBox; pass?: number; limit?: number }) {
  const root = box.depth === 0;
  const badge = box.kind === "cycle" ? (pass ? `pass ${pass}${limit ? ` / ${limit}` : ""}` : limit ? `up to ${limit} passes` : "loop") : undefined;
  const badgeW = badge ? badge.length * 6 + 14 : 0;
  return (
    <g data-testid="flow-group" data-node-id={box.id} data-kind={box.kind} transform={`translate(${box.x} ${box.y})`}>
      <rect
        width={box.w}
        height={box.h}
        rx={10}
        strokeWidth={1}
        strokeDasharray={root ? "4 3" : undefined}
        className={root ? "fill-transparent stroke-zinc-200 dark:stroke-zinc-800" : "fill-zinc-50 stroke-zinc-300 dark:fill-zinc-900/50 dark:stroke-zinc-700"}
      />
      <text x={10} y={18} className="fill-zinc-500 text-[10.5px] font-medium tracking-wide uppercase dark:fill-zinc-400">
        {fit(box.label && box.label !== box.kind ? `${box.kind} · ${box.label}` : box.kind, box.w - 24 - badgeW, { size: 10.5, weight: 500, spacingEm: 0.025, upper: true }, 6.8)}
      </text>
      {badge && (
        <g data-testid="cycle-pass" data-pass={pass ?? 0} transform={`translate(${box.w - badgeW - 8} 7)`}>
          <rect width={badgeW} height={16} rx={8} className="fill-violet-100 dark:fill-violet-500/20" />
          <text x={badgeW / 2} y={11.5} textAnchor="middle" className="fill-violet-700 text-[10px] font-semibold dark:fill-violet-300">
            {badge}
          </text>
        </g>
      )}
    </g>
  );
}

function AgentNode({ box, status, live, selected, onSelect, cli }: { box: LayoutBox; status: NodeStatus; live: boolean; selected: boolean; onSelect?: (agent: string) => void; cli?: CliAgentRef }) {
  const style = NODE_STYLE[status];
  const agent = box.agent ?? box.label;
  const sub = cli ? `${cli.provider}${cli.branch ? ` · ${cli.branch.replace(/^switchyard\//, "")}` : ""}` : box.observer ? (live ? `${style.text} · observer` : "observer") : live ? style.text : "agent";
  const select = () => onSelect?.(agent);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== "Enter" && e.key !== " ") return;
    e.preventDefault();
    select();
  };
  return (
    <g
      data-testid="flow-node"
      data-node-id={box.id}
      data-agent={agent}
      data-status={status}
      transform={`translate(${box.x} ${box.y})`}
      {...(onSelect ? { role: "button", tabIndex: 0, onClick: select, onKeyDown, "aria-pressed": selected } : {})}
      aria-label={`${agent}${box.observer ? " (observer)" : ""}: ${live ? style.text : "agent"}`}
      className={onSelect ? "cursor-pointer outline-none focus-visible:[&>rect]:stroke-indigo-600" : undefined}
    >
      <title>{`${agent}${box.observer ? " (observer)" : ""} — ${box.id}`}</title>
      {selected && <rect x={-3} y={-3} width={box.w + 6} height={box.h + 6} rx={11} className="fill-none stroke-indigo-500/50" strokeWidth={2} />}
      <rect width={box.w} height={box.h} rx={8} strokeWidth={1.5} className={`${style.box} transition-colors`} />
      <circle cx={15} cy={box.h / 2} r={4} className={style.dot} />
      <text x={27} y={box.h / 2 - 3} className="fill-zinc-900 text-[12.5px] font-medium dark:fill-zinc-100">
        {fit(agent, box.w - 36, { size: 12.5, weight: 500 }, 7.2)}
      </text>
      <text x={27} y={box.h / 2 + 12} className="fill-zinc-500 text-[10.5px] dark:fill-zinc-400">
        {fit(sub, box.w - (cli ? 52 : 36), { size: 10.5, weight: 400 }, 6.2)}
      </text>
      {cli && (
        <a href={`/agents/${cli.agentId}`} data-testid="flow-node-agent-link" aria-label={`Open CLI agent ${cli.alias}`} onClick={(e) => {
            e.stopPropagation();
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            navigate(`/agents/${cli.agentId}`);
          }}>
          <title>{`CLI agent ${cli.alias} (${cli.provider}${cli.branch ? `, ${cli.branch}` : ""})`}</title>
          <rect x={box.w - 24} y={box.h / 2 - 9} width={18} height={18} rx={4} className="fill-zinc-100 hover:fill-indigo-100 dark:fill-zinc-800 dark:hover:fill-indigo-900" />
          <path d={`M ${box.w - 19} ${box.h / 2 + 4} l 8 -8 m -5 0 h 5 v 5`} className="fill-none stroke-indigo-600 dark:stroke-indigo-300" strokeWidth={1.5} />
        </a>
      )}
    </g>
  );
}
