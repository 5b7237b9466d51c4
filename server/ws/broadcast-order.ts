import type { BusEvent } from "../../shared/events";
import { isAgentStep, isBroadcastFlow, type Flow, type FlowStep } from "../../shared/strategy";
import { frameOf, type Frame } from "../runs/frames";

/** Past this many bytes of held frames in one run, everything held is sent and holding stops. */
export const HOLD_CAP_BYTES = 8 * 1024 * 1024;

/** One branch of one broadcast: the broadcast's step key (with its cycle pass) and the branch index. */
type Branch = { broadcast: string; index: number };

/**
 * The broadcasts a step key is inside, outermost first. Step keys are flow paths: `f.0.1` is step
 * 1 of the flow at step 0; `p<n>` is a cycle pass (same node); `obs` a cycle's observer.
 */
export function branchesOf(root: Flow, stepKey: string): Branch[] {
  const out: Branch[] = [];
  let node: FlowStep = root;
  let key = "f";
  for (const part of stepKey.split(".").slice(1)) {
    if (isAgentStep(node) || part === "obs") break;
    if (/^p\d+$/.test(part)) {
      key = `${key}.${part}`;
      continue;
    }
    const index = Number(part);
    if (isBroadcastFlow(node)) out.push({ broadcast: key, index });
    const next: FlowStep | undefined = node.steps[index];
    if (!next) break;
    node = next;
    key = `${key}.${part}`;
  }
  return out;
}

function stepKeyOf(event: BusEvent): string | undefined {
  switch (event.type) {
    case "run.step_started":
    case "run.step_completed":
    case "run.flow_started":
    case "run.flow_completed":
      return event.payload.stepKey;
    case "run.agent_streamed":
    case "run.agent_responded":
      return event.payload.stepKey;
    default:
      return undefined;
  }
}

/** A frame on hold, or a completion without a frame of its own (a nested step's), in its place. */
type Held = { frame?: Frame; chain: Branch[]; completes?: string; bytes: number };

type RunOrder = { flow: Flow | undefined; held: Held[]; heldBytes: number; done: Set<string>; overflowed: boolean };

/**
 * The Comma wire's order for broadcasts. A broadcast really runs its branches in parallel, but the
 * reference client merges a streamed message only with the last one it shows, so interleaved
 * frames of several agents are drawn twice. On /ws a broadcast's branches are delivered in
 * declaration order: the first streams live; a later branch's frames are held and flushed as soon
 * as every branch before it has completed. request_* frames are never held (a human must see them
 * at once), frames without a step go out at once, and a run's end flushes whatever is held before
 * it. Past HOLD_CAP_BYTES held in a run, everything held is sent and the run streams unordered.
 * The dashboard and tRPC read the events themselves, in their true parallel order.
 */
export class BroadcastOrder {
  private readonly runs = new Map<string, RunOrder>();

  constructor(
    private readonly flowOf: (runId: string) => Flow | undefined,
    private readonly deliver: (runId: string, frame: Frame) => void,
    private readonly capBytes = HOLD_CAP_BYTES,
    /** Whether anyone follows the run: nothing is held (or measured) for a run nobody watches. */
    private readonly listening: (runId: string) => boolean = () => true,
  ) {}

  push(event: BusEvent): void {
    const runId = event.scope.runId;
    if (!runId) return;
    if (event.type === "run.started") this.runs.delete(runId);
    const frame = frameOf(event) ?? undefined;
    const key = stepKeyOf(event);
    if (event.type === "run.completed") {
      this.flushAll(runId);
      this.runs.delete(runId);
    }
    if (key === undefined) {
      if (frame) this.deliver(runId, frame);
      return;
    }
    const completes = event.type === "run.step_completed" || event.type === "run.flow_completed" ? key : undefined;
    if (!frame && !completes) return;
    const order = this.orderOf(runId);
    const chain = order.flow && !order.overflowed ? branchesOf(order.flow, key) : [];
    const item: Held = { frame, chain, completes, bytes: 0 };
    if (this.ready(order, chain) || (order.held.length === 0 && !this.listening(runId))) return this.pass(runId, order, item);
    item.bytes = frame ? JSON.stringify(frame).length : 0;
    order.held.push(item);
    order.heldBytes += item.bytes;
    if (order.heldBytes > this.capBytes) {
      order.overflowed = true;
      this.flushAll(runId);
    }
  }

  private orderOf(runId: string): RunOrder {
    let order = this.runs.get(runId);
    if (!order) this.runs.set(runId, (order = { flow: this.flowOf(runId), held: [], heldBytes: 0, done: new Set(), overflowed: false }));
    return order;
  }

  /** Every branch before this one, in each broadcast it is inside, has completed on the wire. */
  private ready(order: RunOrder, chain: Branch[]): boolean {
    return chain.every((b) => {
      for (let j = 0; j < b.index; j++) if (!order.done.has(`${b.broadcast}.${j}`)) return false;
      return true;
    });
  }

  /** Deliver one item; a completion may release held frames of the branches after it. */
  private pass(runId: string, order: RunOrder, item: Held): void {
    if (item.frame) this.deliver(runId, item.frame);
    if (!item.completes) return;
    order.done.add(item.completes);
    this.release(runId, order);
  }

  /** Send, in arrival order, every held item whose earlier branches are now done; after a completion, look again. */
  private release(runId: string, order: RunOrder): void {
    for (let i = 0; i < order.held.length; i++) {
      const item = order.held[i]!;
      if (!this.ready(order, item.chain)) continue;
      order.held.splice(i, 1);
      order.heldBytes -= item.bytes;
      if (item.frame) this.deliver(runId, item.frame);
      if (item.completes) order.done.add(item.completes);
      i = item.completes ? -1 : i - 1;
    }
  }

  private flushAll(runId: string): void {
    const order = this.runs.get(runId);
    if (!order) return;
    const held = order.held.splice(0);
    order.heldBytes = 0;
    for (const item of held) if (item.frame) this.deliver(runId, item.frame);
  }
}
