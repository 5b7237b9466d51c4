import { useEffect, useRef, useState } from "react";

/**
 * Infinite scroll: a ref for an element under a list; when it comes within `margin` of the
 * viewport and `more` is true (and nothing is loading), `load` runs. The list grows as the reader
 * scrolls, one page at a time.
 */
export function useLoadMore(more: boolean, loading: boolean, load: () => void, margin = "600px") {
  const [target, setTarget] = useState<HTMLElement | null>(null);
  const latest = useRef({ more, loading, load });
  latest.current = { more, loading, load };
  const [visible, setVisible] = useState(false);
  useEffect(() => {
    if (!target) return;
    const observer = new IntersectionObserver((entries) => setVisible(entries.some((e) => e.isIntersecting)), { rootMargin: `0px 0px ${margin} 0px` });
    observer.observe(target);
    return () => observer.disconnect();
  }, [target, margin]);
  // still in sight after a page arrived (a tall screen): the next one
  useEffect(() => {
    if (visible && more && !loading) latest.current.load();
  }, [visible, more, loading]);
  return setTarget;
}
