import { useCallback, useEffect, useRef } from "react";

/**
 * A scroll box that follows its content while the reader is at the bottom (a streaming log), and
 * stays where it is once they scroll up to read. Returns refs for the box and its content.
 */
export function useStickToBottom<Box extends HTMLElement, Content extends HTMLElement>() {
  const box = useRef<Box>(null);
  const content = useRef<Content>(null);
  const stuck = useRef(true);

  const onScroll = useCallback(() => {
    const el = box.current;
    if (el) stuck.current = el.scrollHeight - el.scrollTop - el.clientHeight < 32;
  }, []);

  useEffect(() => {
    const el = box.current;
    const inner = content.current;
    if (!el || !inner || typeof ResizeObserver === "undefined") return;
    const follow = () => {
      if (stuck.current) el.scrollTop = el.scrollHeight;
    };
    follow();
    const observer = new ResizeObserver(follow);
    observer.observe(inner);
    return () => observer.disconnect();
  }, []);

  return { box, content, onScroll };
}
