import picomatch from "picomatch";

/**
 * Glob patterns (picomatch) for the permission policy, the glob tool and the search_files filter.
 * The syntax is the same everywhere: `*` and `?` within one path segment, `**` as a whole segment
 * spans directories (inside a segment, `a**b`, it is a plain `*`), `[abc]` / `[!abc]` classes,
 * `{a,b}` alternatives, `\` escapes the next character. A leading `!` and `+(...)`-style extglobs
 * are literal characters, not syntax. An unclosed `{`, `[` or `(` is an error (GlobError), never
 * closed silently. The semantics of hidden files and of the policy's rules are in ARCHITECTURE.md
 * ("Permission patterns").
 */

export class GlobError extends Error {
  override name = "GlobError";
}

const SYNTAX = { posix: true, nonegate: true, noextglob: true, strictBrackets: true } as const;
const OPENER: Record<string, string> = { "}": "{", "]": "[", ")": "(" };

function compile(patterns: string | string[], options: picomatch.PicomatchOptions, shown: string): picomatch.Matcher {
  if (shown.trim() === "") throw new GlobError("an empty glob pattern matches nothing; remove it");
  try {
    return picomatch(patterns, { ...SYNTAX, ...options });
  } catch (err) {
    const closer = /Missing closing: "(.)"/.exec((err as Error).message)?.[1];
    const opener = closer && OPENER[closer];
    if (opener) throw new GlobError(`invalid glob ${JSON.stringify(shown)}: "${opener}" is never closed by "${closer}" (write \\${opener} to match it literally)`);
    throw new GlobError(`invalid glob ${JSON.stringify(shown)}: ${(err as Error).message}`);
  }
}

/** `./src/` -> `src`. */
function normalize(pattern: string): string {
  return pattern.replace(/^(\.\/)+/, "").replace(/(.)\/+$/, "$1");
}

const isHidden = (segment: string) => segment.startsWith(".");

/** `a/b/c` -> [`a/b`, `a`]; `/x/y` -> [`/x`]. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) out.push(path.slice(0, i));
  return out;
}

/**
 * The glob tool: `pattern` against a whole relative path. `*` and `**` skip hidden files and
 * folders (names starting with `.`) unless `hidden`; a segment of the pattern that starts with a
 * dot names them (`.github/*.yml`, `**\/.env`).
 */
export function fileGlob(pattern: string, options: { hidden?: boolean } = {}): (path: string) => boolean {
  return compile(normalize(pattern), { dot: options.hidden ?? false }, pattern);
}

/**
 * A path rule (policy rules, the search_files filter), like a .gitignore line: a pattern without a
 * `/` matches a name at any depth (`*.env` matches `config/prod.env`), and a pattern that matches
 * a directory covers everything below it (`dist` and `dist/**` cover `dist/a/b.js`). With `hidden`
 * false (allow rules, the tools), what a rule covers never includes a hidden file or folder that
 * the pattern does not name with a dot: `src/**` and `src` cover `src/a.ts`, not `src/.env`. With
 * `hidden` true (deny rules) `*` and `**` match hidden names too: deny `*.env` covers `.env`.
 * `.` is the cwd itself: matched by `.` and by patterns of stars alone (`*`, `**`, `**\/*`).
 */
export function pathGlob(pattern: string, options: { hidden: boolean }): (path: string) => boolean {
  const normalized = normalize(pattern);
  const anyDepth = !normalized.includes("/");
  const match = compile(anyDepth ? [normalized, `**/${normalized}`] : normalized, { dot: options.hidden }, pattern);
  const matchesCwd = normalized === "." || /^\*\*?(\/\*\*?)*$/.test(normalized);
  return (path) => {
    if (path === ".") return matchesCwd;
    if (match(path)) return true;
    const covering = ancestors(path).find((ancestor) => match(ancestor));
    if (covering === undefined) return false;
    return options.hidden || !path.slice(covering.length + 1).split("/").some(isHidden);
  };
}

/**
 * A command-line rule (run_command's allow / deny / ask patterns): the pattern against the whole
 * trimmed command line, where `*` matches anything, `/` and dots included (`git push*` matches
 * `git push origin main`); `?` is one character other than `/`.
 */
export function commandGlob(pattern: string): (command: string) => boolean {
  const match = compile(pattern.trim(), { bash: true, dot: true }, pattern);
  return (command) => match(command.trim());
}
