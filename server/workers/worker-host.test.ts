import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkerAgentHost } from "./worker-host";

describe("WorkerAgentHost.clonePath: where a worker keeps the clone of a repository URL", () => {
  const host = new WorkerAgentHost({ home: "/w", env: {}, serverUrl: "http://10.0.0.1:7422/" });

  it("a repository of its server: repos/<key>; one given as a URL: repos/url-<hash>, the same for the same URL", () => {
    expect(host.clonePath("http://10.0.0.1:7422/git/0123456789abcdef0123.git")).toBe(join("/w", "repos", "0123456789abcdef0123"));
    const other = host.clonePath("https://example.com/git/app.git");
    expect(other).toMatch(/^\/w\/repos\/url-[0-9a-f]{20}$/);
    expect(host.clonePath("https://example.com/git/app.git")).toBe(other);
    expect(host.clonePath("git@example.com:acme/app.git")).not.toBe(other);
  });

  it("refuses what is not a git URL to hand git (a path of this machine, another protocol)", () => {
    expect(() => host.clonePath("/etc")).toThrow(expect.objectContaining({ code: "REPO_URL_INVALID" }));
    expect(() => host.clonePath("file:///etc")).toThrow(expect.objectContaining({ code: "REPO_URL_INVALID" }));
    expect(() => host.clonePath("http://10.0.0.1:7422/git/../x.git")).toThrow(expect.objectContaining({ code: "REPO_NOT_FOUND" }));
  });
});
