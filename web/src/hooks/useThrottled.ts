import { useEffect, useLayoutEffect, useRef, useState } from "react";

/** A value shown while active is rendered in at most about 1/COST_SHARE of the time. */
const COST_SHARE = 4;

/**
 * `value`, changing at most once every `ms` while `active` (a message that streams in), and the
 * latest value at once when not active (the final text is always the one shown). A change after a
 * quiet spell shows at once; changes within the window wait for its end, and the last of them is
 * shown then. The window also stretches to COST_SHARE times what the last change took to render
 * and commit, so an expensive value (a long Markdown text) leaves the page most of its time.
 */
export function useThrottled<T>(value: T, ms: number, active: boolean): T {
  const [shown, setShown] = useState(value);
  const [wasActive, setWasActive] = useState(active);
  const timing = useRef({ shown: value, shownAt: Number.NEGATIVE_INFINITY, renderStart: 0, cost: 0 });
  if (wasActive !== active) {
    // starting (or stopping) to stream: start from the value of now, not one from before
    setWasActive(active);
    setShown(value);
  }
  useLayoutEffect(() => {
    const t = timing.current;
    t.shown = shown;
    if (t.renderStart === 0) return;
    t.cost = Date.now() - t.renderStart;
    t.renderStart = 0;
  }, [shown]);
  useEffect(() => {
    if (!active) return;
    const t = timing.current;
    const show = () => {
      t.shownAt = Date.now();
      if (Object.is(t.shown, value)) return;
      t.renderStart = t.shownAt;
      setShown(value);
    };
    const wait = t.shownAt + Math.max(ms, COST_SHARE * t.cost) - Date.now();
    if (wait <= 0) return show();
    const timer = window.setTimeout(show, wait);
    return () => window.clearTimeout(timer);
  }, [value, ms, active]);
  return active ? shown : value;
}
