/** What the connection indicator shows; `data-state` of `[data-testid=connection-state]`. */
export type ConnectionState = "live" | "reconnecting" | "offline";

export type Connection = {
  state: ConnectionState;
  /** Whether the stream was live at least once since the page loaded ("Connecting" vs "Reconnecting"). */
  wasLive: boolean;
  /** Why it is not live, when known. */
  error?: string;
};

/** After this long without a live stream, "Reconnecting" becomes "Offline" (it keeps retrying). */
export const OFFLINE_AFTER_MS = 15_000;

/** tRPC's subscription status: connecting (incl. retrying), pending (= open), error (gave up), idle. */
export type SubscriptionStatus = "idle" | "connecting" | "pending" | "error";

export function connectionStateOf(opts: { status: SubscriptionStatus; online: boolean; notLiveForMs: number }): ConnectionState {
  if (!opts.online) return "offline";
  if (opts.status === "pending") return "live";
  if (opts.status === "error") return "offline";
  return opts.notLiveForMs >= OFFLINE_AFTER_MS ? "offline" : "reconnecting";
}

export function connectionLabel(c: Connection): string {
  if (c.state === "live") return "Live";
  if (c.state === "offline") return "Offline";
  return c.wasLive ? "Reconnecting…" : "Connecting…";
}
