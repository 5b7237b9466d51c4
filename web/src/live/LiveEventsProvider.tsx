import { createContext, type ReactNode } from "react";
import { useEventStream, type EventStream } from "./useEventStream";

export const LiveEventsContext = createContext<EventStream | null>(null);

/** Holds the app's one event subscription, so the indicator and the feed share it across pages. */
export function LiveEventsProvider({ children }: { children: ReactNode }) {
  const stream = useEventStream();
  return <LiveEventsContext value={stream}>{children}</LiveEventsContext>;
}
