/**
 * A tiny client-side router over the History API: the server sends index.html for every
 * dashboard path (/runs, /runs/<id>, ...), and the app picks the page from location.pathname.
 */
const NAVIGATE_EVENT = "switchyard:navigate";

export function currentPath(): string {
  return window.location.pathname || "/";
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === currentPath() + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
  window.scrollTo({ top: 0 });
}

export function subscribeToPath(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(NAVIGATE_EVENT, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(NAVIGATE_EVENT, onChange);
  };
}
