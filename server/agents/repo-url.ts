import { DomainError } from "../errors";

/** The protocols a repository URL may use: each one git clones over the network. */
const SCHEMES = ["https", "http", "ssh", "git"] as const;

/** `user@host:path`, git's scp-like ssh syntax (the user is required: `host:path` stays a local path). */
const SCP_LIKE = /^([^\s@/:]+)@([^\s/:]+):(.+)$/;

function invalid(repo: string, why: string): DomainError {
  return new DomainError(
    "REPO_URL_INVALID",
    `repo: "${repo}" is not a git URL Switchyard takes (${why}); give https://, http://, ssh://, git:// or user@host:path, or a directory on the server`,
    { details: { field: "repo", repo } },
  );
}

/**
 * A spawn's `repo` as a git URL (trimmed), or null when it names a directory. Refuses
 * (REPO_URL_INVALID) what looks like a URL but is not one git should be handed: another scheme, no
 * host or path, a query or fragment, spaces or control characters, a password in it (the machine
 * that clones brings its own credentials; Switchyard never stores or ships one), or a host or path
 * starting with `-` (an option to ssh).
 */
export function parseRepoUrl(repo: string): string | null {
  const text = repo.trim();
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text)?.[1]?.toLowerCase();
  if (scheme !== undefined) return checkUrl(text, scheme);
  if (/^(https?|ssh|git):/i.test(text)) throw invalid(repo, `"${text.split(":")[0]}:" must be followed by //`);
  const scp = SCP_LIKE.exec(text);
  if (!scp) return null;
  checkChars(repo, text);
  if (scp[2]!.startsWith("-") || scp[3]!.startsWith("-")) throw invalid(repo, "a host or path may not start with -");
  return text;
}

function checkChars(repo: string, text: string): void {
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(text)) throw invalid(repo, "it holds spaces or control characters");
}

function checkUrl(text: string, scheme: string): string {
  if (!(SCHEMES as readonly string[]).includes(scheme)) throw invalid(text, `the protocol ${scheme}:// is not one of ${SCHEMES.map((s) => `${s}://`).join(", ")}`);
  checkChars(text, text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(text, "it does not parse as a URL");
  }
  if (!url.hostname) throw invalid(text, "it names no host");
  if (url.hostname.startsWith("-")) throw invalid(text, "a host may not start with -");
  if (url.pathname === "" || url.pathname === "/") throw invalid(text, "it names no repository path");
  if (url.search || url.hash) throw invalid(text, "a git URL has no query or fragment");
  if (url.password) throw invalid(text, "it carries a password: give the machines that clone it their own git credentials (a credential helper, an ssh key) instead");
  return text;
}
