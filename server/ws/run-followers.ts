import type { WebSocket } from "ws";

/**
 * Which `/ws` sockets follow which run, and the one way frames reach them. app.ts builds it before
 * the services and hands it to both sides: RunsService sends the frames of runs that are not
 * persisted through it (its `onEphemeral` dep), the Comma protocol (comma-connection.ts) adds and
 * removes followers and sends the bus's frames.
 */
export class RunFollowers {
  private readonly byRun = new Map<string, Set<WebSocket>>();
  add(runId: string, s: WebSocket) {
    let set = this.byRun.get(runId);
    if (!set) this.byRun.set(runId, (set = new Set()));
    set.add(s);
  }
  remove(runId: string, s: WebSocket) {
    this.byRun.get(runId)?.delete(s);
  }
  removeSocket(s: WebSocket) {
    for (const set of this.byRun.values()) set.delete(s);
  }
  following(runId: string): boolean {
    return (this.byRun.get(runId)?.size ?? 0) > 0;
  }
  has(runId: string, s: WebSocket) {
    return this.byRun.get(runId)?.has(s) ?? false;
  }
  /** A frame (typed by shared/comma.ts) to every open socket following the run, stamped with `ts`. */
  send(runId: string, frame: { type: string }) {
    const set = this.byRun.get(runId);
    if (!set || set.size === 0) return;
    const data = JSON.stringify({ ...frame, ts: new Date().toISOString() });
    for (const s of set) if (s.readyState === s.OPEN) s.send(data);
  }
}
