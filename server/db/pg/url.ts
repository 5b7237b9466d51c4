import { DATABASE_URL_VAR, DatabaseUrlInvalid } from "./errors";

/** A database URL as it may be shown: the password replaced by `***` (the user, host and database kept). */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    u.search = "";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/** Every spelling of the URL's password (as written and decoded), to scrub from any message. */
export function passwordsOf(url: string): string[] {
  try {
    const raw = new URL(url).password;
    if (!raw) return [];
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // a malformed escape: the raw form is what could leak
    }
    return [...new Set([raw, decoded])].filter((p) => p.length > 0);
  } catch {
    return [];
  }
}

/** `text` without any spelling of the URL's password (nor the whole URL). */
export function scrubPassword(text: string, url: string): string {
  let out = text.split(url).join(redactDatabaseUrl(url));
  for (const p of passwordsOf(url)) out = out.split(p).join("***");
  return out;
}

/** Refuse anything but a postgres:// (or postgresql://) URL, naming the variable, never echoing a password. */
export function checkDatabaseUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new DatabaseUrlInvalid(`${DATABASE_URL_VAR} is not a URL: expected postgres://user:password@host:5432/database`);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new DatabaseUrlInvalid(`${DATABASE_URL_VAR} must start with postgres:// (got ${u.protocol}//...): expected postgres://user:password@host:5432/database`);
  }
  return u;
}
