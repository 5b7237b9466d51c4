/**
 * Glob patterns to regular expressions, for the glob tool, the search_files filter and the
 * permission policy. `**` spans directories (`a/**\/b` matches `a/b` and `a/x/y/b`), `*` and `?`
 * stay within one segment, `[abc]` / `[!abc]` are character classes, `{a,b}` alternatives.
 * With `anySlash` (commands, not paths) `*` and `?` match `/` too.
 */

export type GlobOptions = { anySlash?: boolean };

const SPECIAL = /[.+^$()|\\]/;

function classAt(pattern: string, start: number): { source: string; end: number } | undefined {
  const close = pattern.indexOf("]", start + 2);
  if (close < 0) return undefined;
  let body = pattern.slice(start + 1, close);
  if (body.startsWith("!")) body = `^${body.slice(1)}`;
  return { source: `[${body.replace(/\\/g, "\\\\")}]`, end: close + 1 };
}

export function globToRegExp(pattern: string, options: GlobOptions = {}): RegExp {
  const one = options.anySlash ? "." : "[^/]";
  let source = "";
  let depth = 0;
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i] as string;
    if (pattern.startsWith("**", i)) {
      const segmentStart = i === 0 || pattern[i - 1] === "/";
      if (segmentStart && pattern[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 3;
      } else {
        source += ".*";
        i += 2;
      }
      continue;
    }
    if (ch === "*") source += `${one}*`;
    else if (ch === "?") source += one;
    else if (ch === "[") {
      const cls = classAt(pattern, i);
      if (cls) {
        source += cls.source;
        i = cls.end;
        continue;
      }
      source += "\\[";
    } else if (ch === "{") {
      depth++;
      source += "(?:";
    } else if (ch === "}" && depth > 0) {
      depth--;
      source += ")";
    } else if (ch === "," && depth > 0) source += "|";
    else source += SPECIAL.test(ch) || ch === "{" || ch === "}" ? `\\${ch}` : ch;
    i++;
  }
  source += ")".repeat(depth);
  return new RegExp(`^${source}$`);
}

/** Matches a relative posix path; a pattern without `/` also matches any single segment (like .gitignore). */
export function matchPath(pattern: string, path: string): boolean {
  const normalized = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  const regex = globToRegExp(normalized);
  if (regex.test(path)) return true;
  return !normalized.includes("/") && path.split("/").some((segment) => regex.test(segment));
}
