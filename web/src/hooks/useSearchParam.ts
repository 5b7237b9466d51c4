import { useCallback, useState } from "react";

/**
 * A string kept in the page's query string (`?status=running`), so a filter survives going to a
 * detail page and back. Replaces the history entry: typing does not add back-button steps.
 */
export function useSearchParam(name: string, fallback = ""): [string, (value: string) => void] {
  const [value, setValue] = useState(() => new URLSearchParams(window.location.search).get(name) ?? fallback);
  const update = useCallback(
    (next: string) => {
      setValue(next);
      const params = new URLSearchParams(window.location.search);
      if (next === fallback) params.delete(name);
      else params.set(name, next);
      const search = params.toString();
      window.history.replaceState(window.history.state, "", `${window.location.pathname}${search ? `?${search}` : ""}`);
    },
    [name, fallback],
  );
  return [value, update];
}
