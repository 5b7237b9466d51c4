import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve as resolvePath } from "node:path";

/**
 * The shape of a key in `/git/<key>.git/...` (gitExportKey's 20 hex characters fit it): anything else
 * is a 404 before the resolver is asked, so no `.`, `/` or `%` ever reaches a path.
 */
export const EXPORT_KEY_SHAPE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The opaque key a repository is served under: the first 20 hex characters of the sha256 of its
 * absolute, realpath'd root. Pure in the path, so every server of one database (on one machine, or
 * machines that mount the repository at the same path) computes the same key. Throws when the path
 * does not exist.
 */
export function gitExportKey(repoPath: string): string {
  const root = realpathSync(resolvePath(repoPath));
  return createHash("sha256").update(root).digest("hex").slice(0, 20);
}

/** A resolver over a fixed list of repository roots (tests, or a caller that knows its repositories up front). */
export function exportResolver(repoPaths: Iterable<string>): (key: string) => { repoPath: string } | null {
  const byKey = new Map<string, string>();
  for (const path of repoPaths) byKey.set(gitExportKey(path), realpathSync(resolvePath(path)));
  return (key) => {
    const repoPath = byKey.get(key);
    return repoPath ? { repoPath } : null;
  };
}
