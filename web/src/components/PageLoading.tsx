/** The placeholder of a page whose code is still loading (a lazy form or detail page). */
export function PageLoading() {
  return (
    <div aria-busy="true" aria-label="Loading" className="space-y-3">
      <div className="h-3 w-16 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      <div className="h-6 w-56 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      <div className="h-4 w-80 max-w-full animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
    </div>
  );
}
