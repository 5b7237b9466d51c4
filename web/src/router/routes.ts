/** The dashboard's pages; each has a top-level path the server falls back to index.html for. */
export type PageId = "home" | "runs" | "agents" | "daemons" | "conversations" | "inbox" | "accounts";

export type Route = { page: PageId; id?: string } | { page: "not-found"; path: string };

const SECTIONS: readonly PageId[] = ["runs", "agents", "daemons", "conversations", "inbox", "accounts"];

export function matchRoute(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(safeDecode);
  const [section, id, ...rest] = parts;
  if (section === undefined) return { page: "home" };
  const page = SECTIONS.find((s) => s === section);
  if (!page || rest.length > 0) return { page: "not-found", path };
  return id === undefined ? { page } : { page, id };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
