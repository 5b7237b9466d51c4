import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { backendEnv, CgiError, readCgiHead, type BackendRequest } from "./cgi";

const request: BackendRequest = { repoPath: "/repos/a", path: "/info/refs", method: "GET", query: "service=git-upload-pack", remoteAddr: "127.0.0.1", receivePack: false };

/** The config entries GIT_CONFIG_COUNT/KEY_i/VALUE_i give, as an object. */
function configOf(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (let i = 0; i < Number(env.GIT_CONFIG_COUNT); i++) out[env[`GIT_CONFIG_KEY_${i}`]!] = env[`GIT_CONFIG_VALUE_${i}`];
  return out;
}

describe("backendEnv", () => {
  const server = { PATH: "/usr/bin", HOME: "/home/me", SWITCHYARD_TOKEN: "secret-token", ANTHROPIC_API_KEY: "sk-x", GIT_DIR: "/elsewhere/.git", GIT_CONFIG_PARAMETERS: "'core.hookspath'='/x'" };

  it("keeps the server's secrets and its GIT_* variables away from git", () => {
    const env = backendEnv(request, server);
    expect(env.PATH).toBe("/usr/bin");
    expect(env.HOME).toBe("/home/me");
    expect(Object.values(env)).not.toContain("secret-token");
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.GIT_DIR).toBeUndefined();
    expect(env.GIT_CONFIG_PARAMETERS).toBeUndefined();
  });

  it("is the CGI environment of the request", () => {
    const env = backendEnv({ ...request, path: "/git-upload-pack", method: "POST", query: "", contentType: "application/x-git-upload-pack-request", contentLength: "123", gzip: true, gitProtocol: "version=2" }, server);
    expect(env).toMatchObject({
      GIT_PROJECT_ROOT: "/repos/a",
      PATH_INFO: "/git-upload-pack",
      REQUEST_METHOD: "POST",
      QUERY_STRING: "",
      CONTENT_TYPE: "application/x-git-upload-pack-request",
      CONTENT_LENGTH: "123",
      HTTP_CONTENT_ENCODING: "gzip",
      GIT_PROTOCOL: "version=2",
      GIT_HTTP_EXPORT_ALL: "1",
      REMOTE_ADDR: "127.0.0.1",
    });
  });

  it("leaves out CONTENT_LENGTH, gzip and GIT_PROTOCOL when the request has none", () => {
    const env = backendEnv(request, server);
    expect(env.CONTENT_LENGTH).toBeUndefined();
    expect(env.HTTP_CONTENT_ENCODING).toBeUndefined();
    expect(env.GIT_PROTOCOL).toBeUndefined();
  });

  it("enables receive-pack for this call only when asked, never dumb-HTTP file access", () => {
    expect(configOf(backendEnv(request, server))).toEqual({ "http.receivepack": "false", "http.uploadpack": "true", "http.getanyfile": "false" });
    expect(configOf(backendEnv({ ...request, receivePack: true }, server))["http.receivepack"]).toBe("true");
  });
});

describe("readCgiHead", () => {
  it("parses the status and headers, and leaves the body in the stream", async () => {
    const out = new PassThrough();
    out.end("Status: 404 Not Found\r\nContent-Type: text/plain\r\nExpires: Fri, 01 Jan 1980 00:00:00 GMT\r\n\r\nRepository not found\n");
    const head = await readCgiHead(out);
    expect(head.status).toBe(404);
    expect(head.headers).toEqual({ "content-type": "text/plain", expires: "Fri, 01 Jan 1980 00:00:00 GMT" });
    expect((await head.body.toArray()).join("")).toBe("Repository not found\n");
  });

  it("defaults to 200, and takes a header split over chunks and bare newlines", async () => {
    const out = new PassThrough();
    for (const part of ["Content-Type: application/x-git-", "upload-pack-advertisement\n", "\n", "001e# service=git-upload-pack\n"]) out.write(part);
    out.end();
    const head = await readCgiHead(out);
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe("application/x-git-upload-pack-advertisement");
    expect(Buffer.concat(await head.body.toArray()).toString()).toBe("001e# service=git-upload-pack\n");
  });

  it("streams the body: the first bytes arrive while the backend is still writing", async () => {
    const out = new PassThrough();
    out.write("Content-Type: application/x-git-upload-pack-result\r\n\r\nfirst");
    const head = await readCgiHead(out);
    const first = await new Promise<string>((resolve) => head.body.once("data", (chunk: Buffer) => resolve(chunk.toString())));
    expect(first).toBe("first");
    expect(out.writableEnded).toBe(false);
    out.end();
  });

  it.each([
    ["output without a blank line", "Content-Type: text/plain\r\n"],
    ["a malformed header line", "this is not a header\r\n\r\nbody"],
    ["a bad status", "Status: abc\r\n\r\n"],
  ])("rejects %s", async (_name, text) => {
    const out = new PassThrough();
    out.end(text);
    await expect(readCgiHead(out)).rejects.toBeInstanceOf(CgiError);
  });
});
