import { Component, type ErrorInfo, type ReactNode } from "react";
import { AlertIcon } from "./icons";

type Props = { children: ReactNode; /** Changing it clears the error (e.g. the path: navigating away recovers). */ resetKey?: string };
type State = { error: Error | null };

/** A render error becomes a message with what to do next, never a blank page. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error("Switchyard dashboard error", error, info.componentStack);
  }

  override componentDidUpdate(prev: Props) {
    if (this.state.error && prev.resetKey !== this.props.resetKey) this.setState({ error: null });
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return <ErrorPanel error={error} onRetry={() => this.setState({ error: null })} />;
  }
}

export function ErrorPanel({ error, onRetry }: { error: Error; onRetry: () => void }) {
  return (
    <div role="alert" className="mx-auto my-16 max-w-lg rounded-xl border border-red-200 bg-red-50 p-6 text-sm dark:border-red-900/60 dark:bg-red-950/30">
      <div className="flex items-center gap-2 font-semibold text-red-800 dark:text-red-300">
        <AlertIcon width={18} height={18} />
        This part of the dashboard failed to render
      </div>
      <p className="mt-2 text-red-900/80 dark:text-red-200/80">
        Try again, or reload the page. If it keeps happening, check that the server is running (<code>yard health</code>) and look at
        its log; the browser console has the details.
      </p>
      <pre className="mt-3 overflow-x-auto rounded-md bg-white/70 p-3 font-mono text-xs text-red-900 dark:bg-black/30 dark:text-red-200">{error.message}</pre>
      <div className="mt-4 flex gap-2">
        <button type="button" onClick={onRetry} className="rounded-md bg-red-600 px-3 py-1.5 font-medium text-white hover:bg-red-700">
          Try again
        </button>
        <button
          type="button"
          onClick={() => window.location.reload()}
          className="rounded-md border border-red-300 px-3 py-1.5 font-medium text-red-800 hover:bg-red-100 dark:border-red-800 dark:text-red-200 dark:hover:bg-red-900/40"
        >
          Reload page
        </button>
      </div>
    </div>
  );
}
