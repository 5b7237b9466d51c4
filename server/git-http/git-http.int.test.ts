import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportResolver, gitExportKey } from "./export-key";
import { registerGitHttp, type GitAuthRequest } from "./git-http";
import { FLUSH_PKT, PktReader, pktLine } from "./pkt-line";

/**
 * The endpoint on a bare Fastify app on a random loopback port, driven by the real `git` client.
 * Every git command runs as a child process (async: the server is in this process).
 */

const TOKENS = {
  good: "good-token-0123456789",
  reader: "reader-token-0123456789",
  admin: "admin-token-0123456789",
  stranger: "stranger-token-0123456789",
};
const ZERO = "0".repeat(40);
const MB = 1024 * 1024;

let dir: string;
let src: string;
let big: string;
let key: string;
let bigKey: string;
let app: FastifyInstance;
let base: string;
const logLines: string[] = [];
const requests: { url: string; protocol: string | undefined }[] = [];
const authCalls: GitAuthRequest[] = [];

type Run = { code: number | null; stdout: string; stderr: string };

/** A git client's environment: none of the machine's config, no prompt, an askpass that answers "" (as a worker would set up). */
function clientEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("GIT_")) env[name] = value;
  return {
    ...env,
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "true",
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.com",
  };
}

function git(args: string[], cwd: string, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, env: clientEnv(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** git, which must succeed: its stdout, trimmed. */
async function ok(args: string[], cwd: string, input?: string): Promise<string> {
  const run = await git(args, cwd, input);
  if (run.code !== 0) throw new Error(`git ${args.join(" ")} failed (${run.code}): ${run.stderr}`);
  return run.stdout.trim();
}

/** `git` as a worker runs it: the token in http.extraHeader. */
function withToken(token: string, ...args: string[]): string[] {
  return ["-c", `http.extraHeader=Authorization: Bearer ${token}`, ...args];
}

function url(repoKey = key): string {
  return `${base}/git/${repoKey}.git`;
}

async function commit(repo: string, file: string, content: string): Promise<string> {
  writeFileSync(join(repo, file), content);
  await ok(["add", file], repo);
  await ok(["commit", "-qm", `change ${file}`], repo);
  return ok(["rev-parse", "HEAD"], repo);
}

async function clone(token: string, into: string, ...extra: string[]): Promise<string> {
  const target = join(dir, into);
  await ok([...withToken(token, ...extra), "clone", "-q", url(), target], dir);
  return target;
}

async function randomFile(path: string, size: number): Promise<void> {
  const out = createWriteStream(path);
  for (let written = 0; written < size; written += MB) if (!out.write(randomBytes(MB))) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A raw HTTP GET, path sent exactly as given (no normalization of `..`). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/`, { path, headers: { authorization: `Bearer ${TOKENS.good}` } }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** `git cat-file blob <object>` in `repo`, written to `path`. */
function catFile(repo: string, object: string, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["cat-file", "blob", object], { cwd: repo, env: clientEnv(), stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.pipe(createWriteStream(path)).on("finish", resolve).on("error", reject);
    child.on("error", reject);
  });
}

/** Every pkt-line of a response body, "flush" for a flush-pkt. */
function pktLines(data: Buffer): string[] {
  const reader = new PktReader();
  reader.push(data);
  const out: string[] = [];
  for (let line = reader.next(); line !== null; line = reader.next()) out.push(line === "flush" ? "flush" : line.toString("latin1"));
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "switchyard-git-http-"));
  src = join(dir, "src");
  big = join(dir, "big");
  for (const repo of [src, big]) await ok(["init", "-q", "-b", "main", repo], dir);
  await commit(src, "README.md", "hello\n");
  await randomFile(join(big, "blob-1.bin"), 20 * MB);
  await ok(["add", "blob-1.bin"], big);
  await ok(["commit", "-qm", "20 MB"], big);
  key = gitExportKey(src);
  bigKey = gitExportKey(big);

  app = Fastify({ logger: { level: "trace", stream: { write: (line: string) => void logLines.push(line) } } });
  app.addHook("onRequest", async (req) => {
    requests.push({ url: req.url, protocol: req.headers["git-protocol"] as string | undefined });
  });
  const grants: Record<string, { keys: string[]; push: boolean; refs?: string[] }> = {
    [TOKENS.good]: { keys: [key, bigKey], push: true },
    [TOKENS.reader]: { keys: [key], push: false },
    [TOKENS.admin]: { keys: [key], push: true, refs: ["refs/heads/feature"] },
    [TOKENS.stranger]: { keys: [bigKey], push: true },
  };
  await registerGitHttp(app, {
    resolve: exportResolver([src, big]),
    authorize: async (request) => {
      authCalls.push(request);
      const grant = grants[request.token];
      if (!grant) return { status: 401, message: "unknown token" };
      if (!grant.keys.includes(request.key)) return { status: 403, message: "this token may not use this repository" };
      if (request.service === "git-receive-pack" && !grant.push) return { status: 403, message: "this token may fetch only" };
      if (request.refs && !request.refs.every((ref) => grant.refs?.includes(ref.refName))) return { status: 403, message: "this token may push refs/heads/switchyard/* only" };
      return true;
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("git smart HTTP", () => {
  it("clones over protocol v2, fetches new commits, and pushes switchyard/foo into a repository with main checked out", async () => {
    const work = await clone(TOKENS.good, "v2");
    expect(await ok(["rev-parse", "HEAD"], work)).toBe(await ok(["rev-parse", "main"], src));
    expect(requests.filter((r) => r.url.startsWith(`/git/${key}.git/`)).every((r) => r.protocol === "version=2")).toBe(true);

    const upstream = await commit(src, "news.txt", "new upstream commit\n");
    await ok(withToken(TOKENS.good, "fetch", "-q", "origin"), work);
    expect(await ok(["rev-parse", "origin/main"], work)).toBe(upstream);

    await ok(["checkout", "-q", "-b", "switchyard/foo", "origin/main"], work);
    const mine = await commit(work, "agent.txt", "the agent's work\n");
    await ok(withToken(TOKENS.good, "push", "-q", "origin", "switchyard/foo"), work);
    expect(await ok(["rev-parse", "refs/heads/switchyard/foo"], src)).toBe(mine);
    // the source repository keeps its checked-out branch and a clean work tree
    expect(await ok(["symbolic-ref", "HEAD"], src)).toBe("refs/heads/main");
    expect(await ok(["rev-parse", "main"], src)).toBe(upstream);
    expect(await ok(["status", "--porcelain"], src)).toBe("");
  });

  it("clones, fetches and pushes over protocol v0 too", async () => {
    const before = requests.length;
    const work = await clone(TOKENS.good, "v0", "-c", "protocol.version=0");
    await ok(["checkout", "-q", "-b", "switchyard/v0"], work);
    const mine = await commit(work, "v0.txt", "pushed over v0\n");
    await ok(withToken(TOKENS.good, "-c", "protocol.version=0", "push", "-q", "origin", "switchyard/v0"), work);
    expect(await ok(["rev-parse", "refs/heads/switchyard/v0"], src)).toBe(mine);
    await ok(withToken(TOKENS.good, "-c", "protocol.version=0", "fetch", "-q", "origin"), work);
    expect(await ok(["rev-parse", "origin/switchyard/v0"], work)).toBe(mine);
    const v0 = requests.slice(before);
    expect(v0.length).toBeGreaterThan(0);
    expect(v0.every((r) => r.protocol === undefined)).toBe(true);
  });

  it("without a token, or with an unknown one, git fails with Authentication failed", async () => {
    const none = await git(["clone", "-q", url(), join(dir, "none")], dir);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain("Authentication failed");
    expect(none.stderr).toContain("Authentication required");

    const wrong = await git([...withToken("not-a-token"), "clone", "-q", url(), join(dir, "wrong")], dir);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("Authentication failed");
    expect(wrong.stderr).toContain("remote: unknown token");

    const res = await fetch(`${url()}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("a token not allowed on the repository gets 403; a fetch-only token cannot push", async () => {
    const stranger = await git([...withToken(TOKENS.stranger), "clone", "-q", url(), join(dir, "stranger")], dir);
    expect(stranger.code).not.toBe(0);
    expect(stranger.stderr).toContain("403");
    expect(stranger.stderr).toContain("remote: this token may not use this repository");

    const work = await clone(TOKENS.reader, "reader");
    await ok(["checkout", "-q", "-b", "switchyard/reader"], work);
    await commit(work, "reader.txt", "x\n");
    const push = await git(withToken(TOKENS.reader, "push", "origin", "switchyard/reader"), work);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain("403");
    expect(push.stderr).toContain("remote: this token may fetch only");
    expect((await git(["rev-parse", "--verify", "-q", "refs/heads/switchyard/reader"], src)).code).not.toBe(0);
  });

  it("refuses a push to main and the deletion of a switchyard branch with a readable message, refs unchanged", async () => {
    const work = await clone(TOKENS.good, "refused");
    const main = await ok(["rev-parse", "main"], src);
    const foo = await ok(["rev-parse", "refs/heads/switchyard/foo"], src);
    await commit(work, "main.txt", "not allowed on main\n");

    const toMain = await git(withToken(TOKENS.good, "push", "origin", "HEAD:main"), work);
    expect(toMain.code).not.toBe(0);
    expect(toMain.stderr).toContain("! [remote rejected] HEAD -> main (refused by Switchyard: only refs/heads/switchyard/* may be pushed)");
    expect(toMain.stderr).toContain("remote: Switchyard: this token may push refs/heads/switchyard/* only");

    const deletion = await git(withToken(TOKENS.good, "push", "origin", ":switchyard/foo"), work);
    expect(deletion.code).not.toBe(0);
    expect(deletion.stderr).toContain("! [remote rejected] switchyard/foo (refused by Switchyard: deleting refs is not allowed here)");

    // all or nothing: an allowed ref in the same push is not applied either
    const mixed = await git(withToken(TOKENS.good, "push", "origin", "HEAD:main", "HEAD:switchyard/mixed"), work);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toContain("! [remote rejected] HEAD -> switchyard/mixed (refused with the rest of this push)");

    expect(await ok(["rev-parse", "main"], src)).toBe(main);
    expect(await ok(["rev-parse", "refs/heads/switchyard/foo"], src)).toBe(foo);
    expect((await git(["rev-parse", "--verify", "-q", "refs/heads/switchyard/mixed"], src)).code).not.toBe(0);
  });

  it("authorize, given the refs the rule refuses, may allow them", async () => {
    const work = await clone(TOKENS.admin, "admin");
    const feature = await commit(work, "feature.txt", "allowed for this token\n");
    authCalls.length = 0;
    await ok(withToken(TOKENS.admin, "push", "-q", "origin", "HEAD:refs/heads/feature"), work);
    expect(await ok(["rev-parse", "refs/heads/feature"], src)).toBe(feature);
    expect(authCalls.find((call) => call.refs)?.refs).toEqual([{ oldOid: ZERO, newOid: feature, refName: "refs/heads/feature" }]);
    const other = await git(withToken(TOKENS.admin, "push", "origin", "HEAD:refs/heads/other"), work);
    expect(other.stderr).toContain("! [remote rejected] HEAD -> other");
  });

  it("answers 404 for an unknown key, and serves nothing outside the repository's smart-HTTP endpoints", async () => {
    const unknown = await git([...withToken(TOKENS.good), "clone", "-q", url("0123456789abcdef0123"), join(dir, "unknown")], dir);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("not found");

    writeFileSync(join(dir, "secret.txt"), "TOP-SECRET\n");
    const attempts = [
      `/git/0123456789abcdef0123.git/info/refs?service=git-upload-pack`,
      `/git/..%2f..%2fsecret.git/info/refs?service=git-upload-pack`,
      `/git/%2e%2e.git/info/refs?service=git-upload-pack`,
      `/git/${key}.git%2f..%2f..%2fsecret.txt/info/refs?service=git-upload-pack`,
      `/git/${key}.git/../../secret.txt`,
      `/git/${key}.git/..%2f..%2fsecret.txt`,
      `/git/${key}.git/%2e%2e/%2e%2e/secret.txt`,
      `/git/${key}.git/HEAD`,
      `/git/${key}.git/config`,
      `/git/${key}.git/objects/info/packs`,
      `/git/${key}.git/info/refs`,
      `/git/${key}.git/info/refs?service=git-upload-pack%00`,
      `/git/${key}/info/refs?service=git-upload-pack`,
    ];
    for (const path of attempts) {
      const res = await rawGet(path);
      expect([400, 404], path).toContain(res.status);
      expect(res.body, path).not.toContain("TOP-SECRET");
      expect(res.body, path).not.toContain("[core]");
      expect(res.body, path).not.toContain("refs/heads");
    }
  });

  it("inflates a gzip push body before reading it: an allowed push is applied, a refused one answered per ref", async () => {
    const work = await clone(TOKENS.good, "gzip");
    const old = await ok(["rev-parse", "HEAD"], work);
    const next = await commit(work, "gz.txt", "sent gzip-compressed\n");
    const pack = await new Promise<Buffer>((resolve, reject) => {
      const child = spawn("git", ["pack-objects", "--stdout", "--revs", "-q"], { cwd: work, env: clientEnv() });
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.on("error", reject);
      child.on("close", () => resolve(Buffer.concat(chunks)));
      child.stdin.end(`${next}\n^${old}\n`);
    });
    const post = (ref: string, caps: string) =>
      fetch(`${url()}/git-receive-pack`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKENS.good}`, "content-type": "application/x-git-receive-pack-request", "content-encoding": "gzip" },
        body: gzipSync(Buffer.concat([pktLine(`${ZERO} ${next} ${ref}\0${caps}\n`), FLUSH_PKT, pack])),
      });

    const accepted = await post("refs/heads/switchyard/gz", "report-status object-format=sha1");
    expect(accepted.status).toBe(200);
    expect(pktLines(Buffer.from(await accepted.arrayBuffer()))).toEqual(["unpack ok\n", "ok refs/heads/switchyard/gz\n", "flush"]);
    expect(await ok(["rev-parse", "refs/heads/switchyard/gz"], src)).toBe(next);

    const refused = await post("refs/heads/gz-main", "report-status object-format=sha1");
    expect(refused.status).toBe(200);
    expect(pktLines(Buffer.from(await refused.arrayBuffer()))).toEqual(["unpack ok\n", "ng refs/heads/gz-main refused by Switchyard: only refs/heads/switchyard/* may be pushed\n", "flush"]);

    // a client that asked for no report gets the refusal as an HTTP status
    const noReport = await post("refs/heads/gz-main", "object-format=sha1");
    expect(noReport.status).toBe(403);
    expect(await noReport.text()).toContain("this token may push refs/heads/switchyard/* only");
    expect((await git(["rev-parse", "--verify", "-q", "refs/heads/gz-main"], src)).code).not.toBe(0);

    const garbage = await fetch(`${url()}/git-receive-pack`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.good}`, "content-type": "application/x-git-receive-pack-request", "content-encoding": "gzip" },
      body: Buffer.from("this is not gzip"),
    });
    expect(garbage.status).toBe(400);
  });

  it("hands a gzip upload-pack body and the Git-Protocol header to http-backend (a v2 ls-refs)", async () => {
    const res = await fetch(`${url()}/git-upload-pack`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.good}`, "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip", "git-protocol": "version=2" },
      body: gzipSync(Buffer.concat([pktLine("command=ls-refs\n"), pktLine("object-format=sha1\n"), Buffer.from("0001"), pktLine("ref-prefix refs/heads/main\n"), FLUSH_PKT])),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-git-upload-pack-result");
    expect(pktLines(Buffer.from(await res.arrayBuffer()))).toEqual([`${await ok(["rev-parse", "main"], src)} refs/heads/main\n`, "flush"]);
  });

  it("a 20 MB binary file round-trips: a clone of a repository holding it, a push of a commit adding another", async () => {
    // streaming itself is proven in cgi.test.ts and push-commands.test.ts (each side is read
    // before the other end has finished); here: the bytes arrive whole, both ways
    const target = join(dir, "big-clone");
    await ok([...withToken(TOKENS.good), "clone", "-q", url(bigKey), target], dir);
    expect(await sha256(join(target, "blob-1.bin"))).toBe(await sha256(join(big, "blob-1.bin")));

    await randomFile(join(target, "blob-2.bin"), 20 * MB);
    await ok(["checkout", "-q", "-b", "switchyard/big"], target);
    await ok(["add", "blob-2.bin"], target);
    await ok(["commit", "-qm", "another 20 MB"], target);
    await ok(withToken(TOKENS.good, "push", "-q", "origin", "switchyard/big"), target);
    expect(await ok(["rev-parse", "refs/heads/switchyard/big"], big)).toBe(await ok(["rev-parse", "HEAD"], target));
    const stored = join(dir, "blob-2.from-big");
    await catFile(big, "switchyard/big:blob-2.bin", stored);
    expect(await sha256(stored)).toBe(await sha256(join(target, "blob-2.bin")));
  });

  it("never logs a token", () => {
    expect(logLines.length).toBeGreaterThan(0);
    for (const token of Object.values(TOKENS)) expect(logLines.join("\n")).not.toContain(token);
  });
});
