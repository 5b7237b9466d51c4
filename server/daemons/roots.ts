import { isAbsolute, relative, resolve } from "node:path";
import { DomainError } from "../errors";

/**
 * A daemon root or watch path must lie inside `config.home` or one of `config.allowedRoots`.
 * Returns the absolute path, or throws DAEMON_PATH_NOT_ALLOWED naming the field.
 */
export function allowedPath(path: string, field: string, allowedRoots: readonly string[]): string {
  const abs = resolve(path);
  const roots = allowedRoots.map((r) => resolve(r));
  const inside = roots.some((root) => {
    const rel = relative(root, abs);
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  });
  if (inside) return abs;
  throw new DomainError("DAEMON_PATH_NOT_ALLOWED", `${field}: ${abs} is outside the allowed roots (${roots.join(", ")}); add it to SWITCHYARD_ALLOWED_ROOTS`, {
    kind: "FORBIDDEN",
    details: { field, path: abs, allowedRoots: roots },
  });
}
