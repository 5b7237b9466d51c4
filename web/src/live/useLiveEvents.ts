import { useContext } from "react";
import { LiveEventsContext } from "./LiveEventsProvider";
import type { EventStream } from "./useEventStream";

export function useLiveEvents(): EventStream {
  const stream = useContext(LiveEventsContext);
  if (!stream) throw new Error("useLiveEvents() needs a <LiveEventsProvider> above it");
  return stream;
}
