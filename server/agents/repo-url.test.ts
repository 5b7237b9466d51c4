import { describe, expect, it } from "vitest";
import { parseRepoUrl } from "./repo-url";

describe("parseRepoUrl: a spawn's repo as a git URL", () => {
  it("takes https://, http://, ssh://, git:// and user@host:path as given (trimmed)", () => {
    for (const url of [
      "https://github.com/acme/app.git",
      "http://git.internal:8080/app",
      "ssh://git@git.internal:2222/srv/app.git",
      "git://127.0.0.1:9418/app.git",
      "git@github.com:acme/app.git",
    ]) {
      expect(parseRepoUrl(`  ${url} `)).toBe(url);
    }
  });

  it("leaves paths to the directory checks (null)", () => {
    for (const path of ["/srv/app", "./app", "app", "C:dir", "host:path", "../a@b"]) expect(parseRepoUrl(path)).toBeNull();
  });

  it("refuses what looks like a URL but is not one to hand git, naming why (REPO_URL_INVALID)", () => {
    const cases: Array<[string, RegExp]> = [
      ["ftp://host/app.git", /ftp:\/\/ is not one of https:\/\//],
      ["file:///srv/app.git", /file:\/\/ is not one of/],
      ["https:/github.com/acme/app", /must be followed by \/\//],
      ["https://github.com", /names no repository path/],
      ["https://github.com/", /names no repository path/],
      ["https://user:secret@github.com/acme/app.git", /carries a password/],
      ["https://github.com/acme/app.git?x=1", /no query or fragment/],
      ["git://host/app .git", /spaces or control characters/],
      ["git@-oProxyCommand=x:app.git", /may not start with -/],
      ["git@host:-upload-pack=x", /may not start with -/],
    ];
    for (const [repo, why] of cases) {
      let err: unknown;
      try {
        parseRepoUrl(repo);
      } catch (e) {
        err = e;
      }
      expect(err, repo).toMatchObject({ code: "REPO_URL_INVALID", details: { field: "repo" } });
      expect((err as Error).message, repo).toMatch(why);
      expect((err as Error).message).toMatch(/give https:\/\/, http:\/\/, ssh:\/\/, git:\/\/ or user@host:path/);
    }
  });
});
