import type { FlowGraph, FlowGraphEdge, FlowGraphNode } from "../../../shared/strategy";

/**
 * A layered layout of a flow graph, for an SVG: sequential steps left to right, broadcast steps
 * stacked between a fork and a join, a cycle's steps (and observer) in a row over a loop arrow,
 * nested flows as boxes around their steps. Pure: sizes in px, computed bottom-up.
 */

export type LayoutBox = {
  id: string;
  kind: FlowGraphNode["kind"];
  label: string;
  agent?: string;
  x: number;
  y: number;
  w: number;
  h: number;
  /** The y where edges enter and leave (the middle of the content, below a flow's header). */
  portY: number;
  depth: number;
  observer: boolean;
};

export type LayoutEdge = FlowGraphEdge & { d: string };
export type FlowLayout = { width: number; height: number; boxes: LayoutBox[]; edges: LayoutEdge[] };

/** Wide enough for "Completed · observer" and a 16-character agent name. */
export const NODE_W = 168;
export const NODE_H = 46;
const GAP_X = 44;
const GAP_Y = 14;
const PAD = 14;
const HEADER = 28;
const FORK = 34;
const LOOP_SPACE = 30;
const MARGIN = 6;

type Size = { w: number; h: number };

export function layoutFlowGraph(graph: FlowGraph): FlowLayout {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const children = new Map<string, FlowGraphNode[]>();
  for (const node of graph.nodes) {
    if (!node.parent) continue;
    const list = children.get(node.parent) ?? [];
    list.push(node);
    children.set(node.parent, list);
  }
  const isObserver = (n: FlowGraphNode) => n.id.endsWith(".observer");
  const stepsOf = (id: string) => (children.get(id) ?? []).filter((n) => !isObserver(n));
  const observerOf = (id: string) => (children.get(id) ?? []).find(isObserver);
  /** A row: the steps, then the observer (a cycle's). */
  const rowOf = (node: FlowGraphNode) => [...stepsOf(node.id), ...(node.kind === "cycle" ? [observerOf(node.id)].filter((n): n is FlowGraphNode => !!n) : [])];

  const sizes = new Map<string, Size>();
  const measure = (node: FlowGraphNode): Size => {
    let size: Size;
    if (node.kind === "agent") size = { w: NODE_W, h: NODE_H };
    else if (node.kind === "broadcast") {
      const inner = stepsOf(node.id).map(measure);
      size = { w: FORK * 2 + Math.max(NODE_W, ...inner.map((s) => s.w)), h: HEADER + inner.reduce((h, s) => h + s.h, 0) + GAP_Y * Math.max(0, inner.length - 1) + PAD };
    } else {
      const inner = rowOf(node).map(measure);
      const w = PAD * 2 + inner.reduce((sum, s) => sum + s.w, 0) + GAP_X * Math.max(0, inner.length - 1);
      size = { w: Math.max(w, NODE_W + PAD * 2), h: HEADER + Math.max(NODE_H, ...inner.map((s) => s.h)) + PAD + (node.kind === "cycle" ? LOOP_SPACE : 0) };
    }
    sizes.set(node.id, size);
    return size;
  };

  const boxes = new Map<string, LayoutBox>();
  const place = (node: FlowGraphNode, x: number, y: number, depth: number) => {
    const { w, h } = sizes.get(node.id)!;
    const contentH = h - HEADER - PAD - (node.kind === "cycle" ? LOOP_SPACE : 0);
    const portY = node.kind === "agent" ? y + h / 2 : y + HEADER + contentH / 2;
    boxes.set(node.id, { id: node.id, kind: node.kind, label: node.label, ...(node.agent ? { agent: node.agent } : {}), x, y, w, h, portY, depth, observer: isObserver(node) });
    if (node.kind === "agent") return;
    if (node.kind === "broadcast") {
      let cy = y + HEADER;
      for (const child of stepsOf(node.id)) {
        const s = sizes.get(child.id)!;
        place(child, x + FORK + (w - FORK * 2 - s.w) / 2, cy, depth + 1);
        cy += s.h + GAP_Y;
      }
      return;
    }
    let cx = x + PAD;
    for (const child of rowOf(node)) {
      const s = sizes.get(child.id)!;
      place(child, cx, y + HEADER + (contentH - s.h) / 2, depth + 1);
      cx += s.w + GAP_X;
    }
  };

  const root = graph.nodes.find((n) => !n.parent);
  if (!root) return { width: 0, height: 0, boxes: [], edges: [] };
  const rootSize = measure(root);
  place(root, MARGIN, MARGIN, 0);
  const edges = graph.edges.flatMap((edge): LayoutEdge[] => {
    const from = boxes.get(edge.from);
    const to = boxes.get(edge.to);
    if (!from || !to) return [];
    const cycle = byId.get(edge.kind === "loop" ? (byId.get(edge.to)?.parent ?? "") : "");
    return [{ ...edge, d: edgePath(edge.kind, from, to, cycle ? boxes.get(cycle.id) : undefined) }];
  });
  // Boxes in drawing order: containers first (outermost first), then agents on top.
  const ordered = [...boxes.values()].sort((a, b) => Number(a.kind === "agent") - Number(b.kind === "agent") || a.depth - b.depth);
  return { width: rootSize.w + MARGIN * 2, height: rootSize.h + MARGIN * 2, boxes: ordered, edges };
}

const round = (n: number) => Math.round(n * 10) / 10;

function curve(x1: number, y1: number, x2: number, y2: number): string {
  const dx = Math.max(16, Math.abs(x2 - x1) / 2);
  return `M ${round(x1)} ${round(y1)} C ${round(x1 + dx)} ${round(y1)}, ${round(x2 - dx)} ${round(y2)}, ${round(x2)} ${round(y2)}`;
}

/** The SVG path of one edge (see flowGraph on the server for what each kind means). */
function edgePath(kind: FlowGraphEdge["kind"], from: LayoutBox, to: LayoutBox, cycle: LayoutBox | undefined): string {
  switch (kind) {
    case "fanout":
      // from the broadcast's left edge (its fork) to each branch
      return curve(from.x, from.portY, to.x, to.portY);
    case "fanin":
      // from each branch to the broadcast's right edge (its join)
      return curve(from.x + from.w, from.portY, to.x + to.w, to.portY);
    case "loop":
      return loopPath(from, to, cycle);
    default:
      return curve(from.x + from.w, from.portY, to.x, to.portY);
  }
}

/** Down from the end of the pass, back under the row, up into its first step. */
function loopPath(from: LayoutBox, to: LayoutBox, cycle: LayoutBox | undefined): string {
  const same = from.id === to.id;
  const fx = same ? from.x + from.w * 0.7 : from.x + from.w / 2;
  const tx = same ? to.x + to.w * 0.3 : to.x + to.w / 2;
  const fy = from.y + from.h;
  const ty = to.y + to.h;
  const ly = cycle ? cycle.y + cycle.h - LOOP_SPACE / 2 - 2 : Math.max(fy, ty) + 16;
  const r = Math.min(8, Math.max(0, (ly - Math.max(fy, ty)) / 2), Math.abs(fx - tx) / 2);
  return [
    `M ${round(fx)} ${round(fy)}`,
    `V ${round(ly - r)}`,
    `Q ${round(fx)} ${round(ly)} ${round(fx - r)} ${round(ly)}`,
    `H ${round(tx + r)}`,
    `Q ${round(tx)} ${round(ly)} ${round(tx)} ${round(ly - r)}`,
    `V ${round(ty)}`,
  ].join(" ");
}
