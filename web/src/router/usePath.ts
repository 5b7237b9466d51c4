import { useSyncExternalStore } from "react";
import { currentPath, subscribeToPath } from "./history";

/** The current pathname; re-renders on navigate() and on back/forward. */
export function usePath(): string {
  return useSyncExternalStore(subscribeToPath, currentPath, () => "/");
}
