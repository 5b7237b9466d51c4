import type { ReactNode } from "react";
import { errorCode, errorMessage, isNetworkError } from "../lib/errors";
import { AlertIcon } from "./icons";

/** A failed load, as a message with what to do and a Retry button (never a blank page). */
export function QueryError({ title, error, onRetry, hint }: { title: string; error: unknown; onRetry?: () => void; hint?: string }) {
  const code = errorCode(error);
  return (
    <div role="alert" data-testid="query-error" className="mt-6 rounded-xl border border-red-200 bg-red-50 p-5 text-sm dark:border-red-900/60 dark:bg-red-950/30">
      <div className="flex items-center gap-2 font-semibold text-red-800 dark:text-red-300">
        <AlertIcon width={16} height={16} />
        {title}
        {code && !isNetworkError(error) && <span className="rounded bg-red-100 px-1.5 py-0.5 font-mono text-xs font-medium dark:bg-red-900/40">{code}</span>}
      </div>
      <p className="mt-1.5 whitespace-pre-wrap text-red-900/80 dark:text-red-200/80">{errorMessage(error)}</p>
      {hint && <p className="mt-1.5 text-red-900/70 dark:text-red-200/70">{hint}</p>}
      {onRetry && (
        <button type="button" onClick={onRetry} className="mt-3 rounded-md bg-red-600 px-3 py-1.5 font-medium text-white hover:bg-red-700">
          Try again
        </button>
      )}
    </div>
  );
}

/** An inline error under a form or control. */
export function InlineError({ children, id }: { children: ReactNode; id?: string }) {
  return (
    <p id={id} role="alert" className="mt-1.5 flex items-start gap-1.5 text-sm text-red-700 dark:text-red-400">
      <AlertIcon width={14} height={14} className="mt-0.5 shrink-0" />
      <span className="min-w-0 whitespace-pre-wrap">{children}</span>
    </p>
  );
}
