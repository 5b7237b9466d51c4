import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { git, makeRepo, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { removeHome, tempHome } from "../testing/server-harness";
import { killWorkerSessions, killYardWorker, startYardWorker, until, type WorkerProc } from "../testing/yard-worker";

/** A free loopback port (listened on, then closed). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The appCode of a refused call. */
async function refusal(p: Promise<unknown>): Promise<{ appCode?: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return { appCode: (err as { data?: { appCode?: string } }).data?.appCode, message: (err as Error).message };
  }
  throw new Error("expected the call to be refused");
}

/** A fake agent's script: write a file and commit it on its branch. */
const writeAndCommit = (file: string, text: string) => [
  { write: { path: file, content: `${text}\n` } },
  { bash: `git add ${file} && git commit -q -m "${file}"` },
  { done: `wrote ${file}` },
];

describe("repositories given as git URLs: a worker clones and pushes the URL, the server keeps a mirror", () => {
  let world: AgentsWorld;
  let daemon: ChildProcess;
  /** The git daemon's base path: `app.git`, a bare repository with README.md on main. */
  let served: string;
  let url: string;
  let port: number;
  const workers: WorkerProc[] = [];

  beforeAll(async () => {
    world = await startAgentsWorld();
    served = tempHome("switchyard-served-");
    const work = makeRepo("switchyard-remote-work-");
    git(served, "clone", "-q", "--bare", work, "app.git");
    removeHome(work);
    port = await freePort();
    daemon = spawn("git", ["daemon", "--export-all", "--enable=receive-pack", "--reuseaddr", `--base-path=${served}`, `--port=${port}`, "--listen=127.0.0.1", served], { stdio: "ignore" });
    url = `git://127.0.0.1:${port}/app.git`;
    await until("the git daemon answering", () => {
      try {
        return git(served, "ls-remote", url, "HEAD").includes("HEAD");
      } catch {
        return false;
      }
    });
    const client = world.t.client;
    for (const name of ["u1", "u2"]) workers.push(await startYardWorker(world.t.url, (await client.workers.createToken.mutate({ name })).token, name, { capacity: 2 }));
  }, 90_000);

  afterAll(async () => {
    for (const w of workers) {
      await killYardWorker(w);
      killWorkerSessions(w.home);
      removeHome(w.home);
    }
    daemon?.kill("SIGKILL");
    await world?.stop();
    if (served) removeHome(served);
  });

  const remote = () => join(served, "app.git");

  it("an agent on a worker: the worker clones the URL itself, its branch lands on the remote, changes and diff show it, merge lands it on the remote's main", async () => {
    const client = world.t.client;
    const spawned = await client.agents.spawn.mutate({ provider: "fake", repo: url, worker: "u1", prompt: fakeAgentPrompt("remote notes", writeAndCommit("remote-notes.md", "written on u1")) });
    // the server's mirror of the URL is the agent's repository; its base the remote's default branch
    expect(spawned.repoPath?.startsWith(join(world.t.home, "mirrors"))).toBe(true);
    expect(git(spawned.repoPath!, "config", "remote.origin.url")).toBe(url);
    const done = await waitForAgent(client, spawned.id);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.baseRef).toBe("main");
    // the worker's clone has the URL as its origin (not the server), and its worktree is on its disk
    const u1 = workers[0]!;
    const clones = readdirSync(join(u1.home, "repos")).filter((d) => d.startsWith("url-"));
    expect(clones).toHaveLength(1);
    expect(git(join(u1.home, "repos", clones[0]!), "remote", "get-url", "origin")).toBe(url);
    expect(done.workspacePath.startsWith(join(u1.home, "worktrees"))).toBe(true);
    // pushed to the remote when its run ended
    expect(git(remote(), "show", `switchyard/${done.alias}:remote-notes.md`)).toBe("written on u1");

    const changes = await client.agents.changes.query({ agentId: done.id });
    expect(changes.files.map((f) => f.path)).toEqual(["remote-notes.md"]);
    expect(changes.commitsAhead).toBe(1);
    expect((await client.agents.diff.query({ agentId: done.id })).patch).toContain("+written on u1");

    const merged = await client.agents.merge.mutate({ agentId: done.id });
    expect(merged).toMatchObject({ merged: true, into: "main" });
    // on the remote's main, and the mirror agrees with it
    expect(git(remote(), "show", "main:remote-notes.md")).toBe("written on u1");
    expect(git(done.repoPath!, "rev-parse", "main")).toBe(git(remote(), "rev-parse", "main"));
    // again: already merged, nothing pushed
    expect((await client.agents.merge.mutate({ agentId: done.id })).merged).toBe(false);
  }, 120_000);

  it("with its worker gone (its disk too), changes and diff of the agent come from the mirror, its branch fetched from the URL", async () => {
    const client = world.t.client;
    const u2 = workers[1]!;
    const spawned = await client.agents.spawn.mutate({ provider: "fake", repo: url, worker: "u2", prompt: fakeAgentPrompt("gone", writeAndCommit("from-u2.md", "written on u2")) });
    const done = await waitForAgent(client, spawned.id);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    await killYardWorker(u2);
    rmSync(u2.home, { recursive: true, force: true });
    await until("u2 disconnected", async () => (await client.workers.get.query({ name: "u2" })).state !== "connected");
    // the mirror has not fetched the branch yet: the reads do
    expect(git(done.repoPath!, "branch", "--list", `switchyard/${done.alias}`)).toBe("");
    const changes = await client.agents.changes.query({ agentId: done.id });
    expect(changes).toMatchObject({ dirty: false, commitsAhead: 1 });
    expect(changes.files.map((f) => f.path)).toEqual(["from-u2.md"]);
    expect((await client.agents.diff.query({ agentId: done.id })).patch).toContain("+written on u2");
    // and it merges from here
    expect((await client.agents.merge.mutate({ agentId: done.id })).merged).toBe(true);
    expect(git(remote(), "show", "main:from-u2.md")).toBe("written on u2");
  }, 120_000);

  it("a merge the remote refuses changes nothing there, is undone in the mirror, and says why (MERGE_PUSH_FAILED)", async () => {
    const client = world.t.client;
    const done = await waitForAgent(client, (await client.agents.spawn.mutate({ provider: "fake", repo: url, worker: "u1", prompt: fakeAgentPrompt("refused", writeAndCommit("refused.md", "not landed")) })).id);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const before = git(remote(), "rev-parse", "main");
    const hook = join(remote(), "hooks", "pre-receive");
    writeFileSync(hook, "#!/bin/sh\necho 'main is protected here' >&2\nexit 1\n");
    chmodSync(hook, 0o755);
    try {
      const refused = await refusal(client.agents.merge.mutate({ agentId: done.id }));
      expect(refused.appCode).toBe("MERGE_PUSH_FAILED");
      expect(refused.message).toMatch(/main is protected here/);
      expect(refused.message).toMatch(/Nothing changed on the remote/);
    } finally {
      rmSync(hook);
    }
    expect(git(remote(), "rev-parse", "main")).toBe(before);
    expect(git(done.repoPath!, "rev-parse", "main")).toBe(before);
    expect((await client.agents.get.query({ agentId: done.id })).merge).toBeNull();
    // allowed again: it merges
    expect((await client.agents.merge.mutate({ agentId: done.id })).merged).toBe(true);
    expect(git(remote(), "show", "main:refused.md")).toBe("not landed");
  }, 120_000);

  it("an agent on the server's own machine works in a worktree of the mirror; its branch goes to the URL when its run ends, and merges there", async () => {
    const client = world.t.client;
    const spawned = await client.agents.spawn.mutate({ provider: "fake", repo: url, worker: "local", prompt: fakeAgentPrompt("local", writeAndCommit("local.md", "written here")) });
    expect(spawned.worker).toBeNull();
    const done = await waitForAgent(client, spawned.id);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.workspacePath.startsWith(join(world.t.home, "worktrees"))).toBe(true);
    expect(git(done.workspacePath, "rev-parse", "--git-common-dir")).toBe(done.repoPath);
    expect(done.baseRef).toBe("main");
    expect(git(remote(), "show", `switchyard/${done.alias}:local.md`)).toBe("written here");
    expect((await client.agents.changes.query({ agentId: done.id })).files.map((f) => f.path)).toEqual(["local.md"]);
    expect((await client.agents.merge.mutate({ agentId: done.id })).merged).toBe(true);
    expect(git(remote(), "show", "main:local.md")).toBe("written here");
  }, 120_000);

  it("refuses a URL it cannot take (REPO_URL_INVALID) and one it cannot reach (REPO_UNREACHABLE, at once), recording no agent; a worker that cannot clone it fails the agent's start saying so", async () => {
    const client = world.t.client;
    const before = (await client.agents.list.query({})).items.length;
    const bad = await refusal(client.agents.spawn.mutate({ provider: "fake", repo: "ftp://127.0.0.1/app.git", worker: "u1", prompt: "x" }));
    expect(bad.appCode).toBe("REPO_URL_INVALID");
    expect(bad.message).toMatch(/ftp:\/\/ is not one of https:\/\//);
    const secret = await refusal(client.agents.spawn.mutate({ provider: "fake", repo: "https://me:hunter2@example.com/app.git", worker: "u1", prompt: "x" }));
    expect(secret.appCode).toBe("REPO_URL_INVALID");
    expect(secret.message).toMatch(/carries a password/);
    const closed = await freePort();
    const startedAt = Date.now();
    const gone = await refusal(client.agents.spawn.mutate({ provider: "fake", repo: `git://127.0.0.1:${closed}/app.git`, worker: "u1", prompt: "x" }));
    expect(gone.appCode).toBe("REPO_UNREACHABLE");
    expect(gone.message).toMatch(new RegExp(`could not fetch git://127.0.0.1:${closed}/app.git`));
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect((await client.agents.list.query({})).items.length).toBe(before);
    expect(readdirSync(join(world.t.home, "mirrors")).filter((d) => d.includes(".tmp-"))).toEqual([]);

    // the server reaches the URL, this worker's git may not use git:// at all
    const token = (await client.workers.createToken.mutate({ name: "u3" })).token;
    const u3 = await startYardWorker(world.t.url, token, "u3", { capacity: 1, env: { GIT_ALLOW_PROTOCOL: "https" } });
    workers.push(u3);
    const spawned = await client.agents.spawn.mutate({ provider: "fake", repo: url, worker: "u3", prompt: fakeAgentPrompt("no", [{ done: "never" }]) }).catch((err: unknown) => err);
    const crashed = await until("u3's agent crashed", async () => (await client.agents.list.query({})).items.find((a) => a.worker === "u3" && a.status === "crashed"), 30_000);
    expect(crashed.statusReason).toMatch(new RegExp(`This worker could not get ${url.replace(/[.]/g, "\\.")}`));
    expect(crashed.statusReason).toMatch(/not allowed/);
    expect(spawned).toBeInstanceOf(Error);
  }, 120_000);
});
