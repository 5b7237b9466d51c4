import { useLoadMore } from "../hooks/useLoadMore";

/**
 * Under a paged list: how many rows are shown of how many, and the next page loaded as the
 * reader scrolls near (or with the button, for keyboards and when the observer cannot tell).
 */
export function ListFooter(props: { shown: number; total: number | undefined; noun: string; more: boolean; loading: boolean; loadMore: () => void }) {
  const { shown, total, noun, more, loading, loadMore } = props;
  const sentinel = useLoadMore(more, loading, loadMore);
  return (
    <div ref={sentinel} data-testid="list-footer" className="mt-3 flex items-center justify-between gap-3 px-1 text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
      <span>
        {total !== undefined && total >= shown ? `${shown.toLocaleString()} of ${total.toLocaleString()} ${noun}` : `${shown.toLocaleString()} ${noun}`}
      </span>
      {more && (
        <button type="button" disabled={loading} onClick={loadMore} className="rounded-md px-2 py-1 font-medium text-indigo-600 hover:bg-indigo-50 disabled:opacity-60 dark:text-indigo-400 dark:hover:bg-indigo-950/40">
          {loading ? "Loading…" : "Load more"}
        </button>
      )}
    </div>
  );
}
