import { useEffect, useState } from "react";
import { Button } from "./Button";
import { CheckIcon, CopyIcon } from "./icons";

/** Copy `text` to the clipboard; says "Copied" for a moment (or, where the page may not copy, to select it by hand). */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = window.setTimeout(() => setState("idle"), 2000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = () => void copyText(text).then((ok) => setState(ok ? "copied" : "failed"));
  return (
    <Button variant="secondary" onClick={copy} aria-label={`${label}${state === "copied" ? " (copied)" : ""}`} className="shrink-0 px-2.5">
      {state === "copied" ? <CheckIcon width={14} height={14} className="text-emerald-600 dark:text-emerald-400" /> : <CopyIcon width={14} height={14} />}
      <span aria-live="polite">{state === "copied" ? "Copied" : state === "failed" ? "Select it to copy" : "Copy"}</span>
    </Button>
  );
}

/** The Clipboard API (secure pages: https, localhost), else the old way through a hidden textarea. */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through: an http page on another host, or no permission
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
  }
}
