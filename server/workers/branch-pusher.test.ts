import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BranchPusher } from "./branch-pusher";

const ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: ENV, stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
/** The agent commits a new file in its worktree. */
const commitFile = (wt: string, name: string) => {
  writeFileSync(join(wt, `${name}.md`), `${name}\n`);
  git(wt, "add", "-A");
  git(wt, "commit", "-q", "-m", name);
};

/** An origin (bare), a clone of it, and a worktree of the clone on switchyard/a: a worker's layout. */
function layout() {
  const root = mkdtempSync(join(tmpdir(), "branch-pusher-"));
  const seed = join(root, "seed");
  execFileSync("git", ["init", "-q", "-b", "main", seed]);
  writeFileSync(join(seed, "README.md"), "x\n");
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", "init");
  git(root, "clone", "-q", "--bare", seed, "origin.git");
  git(root, "clone", "-q", "--no-checkout", join(root, "origin.git"), "clone");
  const clone = join(root, "clone");
  git(clone, "worktree", "add", "-q", "-b", "switchyard/a", join(root, "wt"), "origin/main");
  return { root, origin: join(root, "origin.git"), wt: join(root, "wt") };
}

describe("BranchPusher: a worker pushes an agent's branch when it commits", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });

  it("pushes each new commit once, nothing while the branch stands still, and tries a failed push again", async () => {
    const { root, origin, wt } = layout();
    roots.push(root);
    const pushed: string[] = [];
    const logged: string[] = [];
    const pusher = new BranchPusher({ log: (l) => logged.push(l), onPushed: (_key, commit) => pushed.push(commit) });
    pusher.watch("a:1", wt);
    // the watch locates the branch in the background
    for (let i = 0; i < 50 && pushed.length === 0; i++) {
      await pusher.tick();
      await new Promise((r) => setTimeout(r, 20));
    }
    // at the start the branch is where it was made: nothing to push
    expect(pushed).toEqual([]);
    expect(() => git(origin, "rev-parse", "--verify", "refs/heads/switchyard/a")).toThrow();

    commitFile(wt, "one");
    await pusher.tick();
    const one = git(wt, "rev-parse", "HEAD");
    expect(git(origin, "rev-parse", "refs/heads/switchyard/a")).toBe(one);
    await pusher.tick();
    await pusher.tick();
    expect(pushed).toEqual([one]);

    // the origin refuses for now (a hook): logged, not pushed, and tried again on the next commit
    writeFileSync(join(origin, "hooks", "pre-receive"), "#!/bin/sh\necho 'not now' >&2\nexit 1\n", { mode: 0o755 });
    commitFile(wt, "two");
    await pusher.tick();
    expect(git(origin, "rev-parse", "refs/heads/switchyard/a")).toBe(one);
    expect(logged.join("\n")).toMatch(/pushing switchyard\/a failed/);
    rmSync(join(origin, "hooks", "pre-receive"));
    commitFile(wt, "three");
    await pusher.tick();
    const three = git(wt, "rev-parse", "HEAD");
    expect(git(origin, "rev-parse", "refs/heads/switchyard/a")).toBe(three);
    expect(pushed).toEqual([one, three]);

    // forgotten (its session ended): no more pushes
    pusher.forget("a:1");
    commitFile(wt, "four");
    await pusher.tick();
    expect(git(origin, "rev-parse", "refs/heads/switchyard/a")).toBe(three);
  });

  it("a folder that is not a switchyard worktree is never pushed", async () => {
    const { root, wt } = layout();
    roots.push(root);
    git(wt, "checkout", "-q", "-b", "other");
    const pushed: string[] = [];
    const pusher = new BranchPusher({ log: () => undefined, onPushed: (_k, c) => pushed.push(c) });
    pusher.watch("b:1", wt);
    await new Promise((r) => setTimeout(r, 200));
    git(wt, "commit", "-q", "--allow-empty", "-m", "x");
    await pusher.tick();
    expect(pushed).toEqual([]);
  });
});
