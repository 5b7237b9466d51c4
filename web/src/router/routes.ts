/** The dashboard's pages; each has a top-level path the server falls back to index.html for. */
export type PageId = "home" | "runs" | "agents" | "daemons" | "conversations" | "inbox" | "accounts" | "workers";

export type Route = { page: PageId; id?: string } | { page: "not-found"; path: string };

const SECTIONS: readonly PageId[] = ["runs", "agents", "daemons", "conversations", "inbox", "accounts", "workers"];

/** What may follow a section's path: any id (a run, agent or daemon), only `new`, or nothing. */
const CHILDREN: Partial<Record<PageId, "id" | "new">> = { runs: "id", agents: "id", daemons: "id", accounts: "new" };

export function matchRoute(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(safeDecode);
  const [section, id, ...rest] = parts;
  if (section === undefined) return { page: "home" };
  const page = SECTIONS.find((s) => s === section);
  if (!page || rest.length > 0) return { page: "not-found", path };
  if (id === undefined) return { page };
  const children = CHILDREN[page];
  if (children === "id" || (children === "new" && id === "new")) return { page, id };
  return { page: "not-found", path };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
