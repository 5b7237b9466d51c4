import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";

let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld();
});
afterAll(async () => {
  await w?.stop();
});

const commitFile = (path: string, content: string) =>
  fakeAgentPrompt(`write ${path}`, [{ write: { path, content } }, { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${path}"` }, { done: `wrote ${path}` }]);

describe("merging an agent's branch", () => {
  it("merges into the checked-out base branch of a clean main checkout", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("feature.txt", "feature\n") });
    await waitForAgent(w.t.client, a.id);
    const r = await w.t.client.agents.merge.mutate({ agentId: a.id });
    expect(r).toMatchObject({ merged: true, into: "main", branch: `switchyard/${a.alias}` });
    expect(readFileSync(join(w.repo, "feature.txt"), "utf8")).toBe("feature\n");
    expect(git(w.repo, "log", "-1", "--format=%s")).toBe(`Merge switchyard/${a.alias} into main`);
    expect(git(w.repo, "status", "--porcelain")).toBe("");
    const again = await w.t.client.agents.merge.mutate({ agentId: a.id });
    expect(again.merged).toBe(false);
  });

  it("reports a conflict with its files and changes nothing; merges into a branch that is not checked out", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("README.md", "agent version\n") });
    await waitForAgent(w.t.client, a.id);
    writeFileSync(join(w.repo, "README.md"), "human version\n");
    git(w.repo, "commit", "-qam", "human edit");
    const before = git(w.repo, "rev-parse", "HEAD");
    await expect(w.t.client.agents.merge.mutate({ agentId: a.id })).rejects.toThrow(/conflicts in README.md/);
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(before);
    expect(git(w.repo, "status", "--porcelain")).toBe("");
    // a branch nobody has checked out: merged without a checkout
    git(w.repo, "branch", "release", `${before}~1`);
    const b = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, baseRef: "release", prompt: commitFile("notes.txt", "n\n") });
    await waitForAgent(w.t.client, b.id);
    const r = await w.t.client.agents.merge.mutate({ agentId: b.id });
    expect(r).toMatchObject({ merged: true, into: "release" });
    expect(git(w.repo, "show", "release:notes.txt")).toBe("n");
    expect(git(w.repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  });

  it("refuses uncommitted agent work and a dirty target checkout", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("uncommitted", [{ write: { path: "loose.txt", content: "x" } }, { done: "left it" }]) });
    await waitForAgent(w.t.client, a.id);
    await expect(w.t.client.agents.merge.mutate({ agentId: a.id })).rejects.toThrow(/uncommitted changes \(loose.txt\)/);
    const b = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("other.txt", "o\n") });
    await waitForAgent(w.t.client, b.id);
    writeFileSync(join(w.repo, "README.md"), "dirty\n");
    await expect(w.t.client.agents.merge.mutate({ agentId: b.id })).rejects.toThrow(/uncommitted changes \(README.md\)/);
    git(w.repo, "checkout", "--", "README.md");
  });

  it("squashes the branch into one commit, or rebases its commits onto the target (checked out or not); a rebase conflict changes nothing", async () => {
    const twoCommits = fakeAgentPrompt("two", [
      { write: { path: "one.txt", content: "1\n" } },
      { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "one"` },
      { write: { path: "two.txt", content: "2\n" } },
      { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "two"` },
      { done: "two commits" },
    ]);
    const s1 = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: twoCommits });
    await waitForAgent(w.t.client, s1.id);
    const before = git(w.repo, "rev-parse", "HEAD");
    const squashed = await w.t.client.agents.merge.mutate({ agentId: s1.id, strategy: "squash" });
    expect(squashed).toMatchObject({ merged: true, into: "main", strategy: "squash" });
    expect(git(w.repo, "rev-list", "--count", `${before}..HEAD`)).toBe("1");
    expect(git(w.repo, "log", "-1", "--format=%P")).toBe(before); // one parent: not a merge
    expect(git(w.repo, "log", "-1", "--format=%s")).toBe(`switchyard/${s1.alias} (squashed, 2 commits)`);
    expect(readFileSync(join(w.repo, "two.txt"), "utf8")).toBe("2\n");
    expect(git(w.repo, "status", "--porcelain")).toBe("");

    const r1 = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("rebased.txt", "r\n") });
    await waitForAgent(w.t.client, r1.id);
    writeFileSync(join(w.repo, "human.txt"), "h\n");
    git(w.repo, "add", "human.txt");
    git(w.repo, "commit", "-qm", "human moves on");
    const head = git(w.repo, "rev-parse", "HEAD");
    const rebased = await w.t.client.agents.merge.mutate({ agentId: r1.id, strategy: "rebase" });
    expect(rebased).toMatchObject({ merged: true, strategy: "rebase" });
    expect(git(w.repo, "log", "-1", "--format=%P")).toBe(head); // linear: the agent's commit on top of the human's
    expect(git(w.repo, "log", "-1", "--format=%s")).toBe("add rebased.txt");
    expect(readFileSync(join(w.repo, "rebased.txt"), "utf8")).toBe("r\n");
    expect(git(w.repo, "worktree", "list")).not.toContain("switchyard-rebase-");

    const c1 = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("human.txt", "agent\n") });
    await waitForAgent(w.t.client, c1.id);
    writeFileSync(join(w.repo, "human.txt"), "human again\n");
    git(w.repo, "commit", "-qam", "human edits human.txt");
    const head2 = git(w.repo, "rev-parse", "HEAD");
    await expect(w.t.client.agents.merge.mutate({ agentId: c1.id, strategy: "rebase" })).rejects.toThrow(/conflicts in human.txt/);
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(head2);
    expect(git(w.repo, "status", "--porcelain")).toBe("");
    expect(git(w.repo, "worktree", "list")).not.toContain("switchyard-rebase-");
  });
});

describe("merging again", () => {
  // two commits, then (a follow-up) a third that changes the first file
  const agentWithFollowUp = (tag: string) =>
    fakeAgentPrompt(`work ${tag}`, {
      steps: [
        { write: { path: `${tag}-a.txt`, content: "1\n" } },
        { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${tag}-a"` },
        { write: { path: `${tag}-b.txt`, content: "b\n" } },
        { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${tag}-b"` },
        { done: "two commits" },
      ],
      resume: [[{ write: { path: `${tag}-a.txt`, content: "2\n" } }, { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "change ${tag}-a"` }, { done: "follow-up committed" }]],
    });

  const followUp = async (agentId: string) => {
    await w.t.client.agents.message.mutate({ agentId, text: "one more change" });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const a = await waitForAgent(w.t.client, agentId);
      if (a.sessionNumber >= 2) return a;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the follow-up did not run");
  };
  const count = (range: string, ...paths: string[]) => Number(git(w.repo, "rev-list", "--count", range, ...(paths.length > 0 ? ["--", ...paths] : [])));

  for (const strategy of ["squash", "rebase"] as const) {
    it(`after a ${strategy}: a second merge does nothing and says so; a follow-up's new commit merges alone`, async () => {
      const tag = `again-${strategy}`;
      const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: agentWithFollowUp(tag) });
      await waitForAgent(w.t.client, a.id);
      const branch = `switchyard/${a.alias}`;
      const before = git(w.repo, "rev-parse", "main");

      // two merges at once: one brings the work in, the other finds it merged
      const both = await Promise.all([w.t.client.agents.merge.mutate({ agentId: a.id, strategy }), w.t.client.agents.merge.mutate({ agentId: a.id, strategy })]);
      const first = both.find((r) => r.merged)!;
      expect(both.filter((r) => r.merged)).toHaveLength(1);
      expect(first).toMatchObject({ into: "main", strategy, commits: 2, head: git(w.repo, "rev-parse", branch) });
      expect(both.find((r) => !r.merged)!.reason).toBe(`already merged into main as ${first.commit!.slice(0, 8)} (${strategy}): no commits since`);
      expect(count(`${before}..main`)).toBe(strategy === "squash" ? 1 : 2);
      const merged = await w.t.client.agents.get.query({ agentId: a.id });
      expect(merged.merge).toMatchObject({ into: "main", strategy, commit: first.commit, head: first.head });
      expect((await w.t.client.agents.list.query({})).items.find((x) => x.id === a.id)?.merge?.commit).toBe(first.commit);
      expect((await w.t.client.agents.changes.query({ agentId: a.id })).commitsSinceMerge).toBe(0);

      // again, by any strategy: nothing changes
      const mainAfter = git(w.repo, "rev-parse", "main");
      for (const s of ["squash", "rebase", "merge"] as const) {
        const again = await w.t.client.agents.merge.mutate({ agentId: a.id, strategy: s });
        expect(again).toMatchObject({ merged: false, commit: null, commits: 0 });
        expect(again.reason).toContain(`already merged into main as ${first.commit!.slice(0, 8)} (${strategy})`);
      }
      expect(git(w.repo, "rev-parse", "main")).toBe(mainAfter);

      // a human moves main on; the agent's follow-up changes a file it merged already
      writeFileSync(join(w.repo, `${tag}-human.txt`), "h\n");
      git(w.repo, "add", `${tag}-human.txt`);
      git(w.repo, "commit", "-qm", `human ${tag}`);
      await followUp(a.id);
      expect((await w.t.client.agents.changes.query({ agentId: a.id })).commitsSinceMerge).toBe(1);
      const beforeFollowUp = git(w.repo, "rev-parse", "main");
      const next = await w.t.client.agents.merge.mutate({ agentId: a.id, strategy });
      expect(next).toMatchObject({ merged: true, commits: 1, head: git(w.repo, "rev-parse", branch) });
      expect(count(`${beforeFollowUp}..main`)).toBe(1);
      expect(git(w.repo, "log", "-1", "--format=%P", "main")).toBe(beforeFollowUp);
      expect(git(w.repo, "log", "-1", "--format=%s", "main")).toBe(strategy === "squash" ? `${branch} (squashed, 1 new commit)` : `change ${tag}-a`);
      expect(readFileSync(join(w.repo, `${tag}-a.txt`), "utf8")).toBe("2\n");
      expect(readFileSync(join(w.repo, `${tag}-b.txt`), "utf8")).toBe("b\n");
      expect(git(w.repo, "status", "--porcelain")).toBe("");
      // the work landed once: each file written by one merge commit (a) or two (a, then its change)
      expect(count(`${before}..main`, `${tag}-b.txt`)).toBe(1);
      expect(count(`${before}..main`, `${tag}-a.txt`)).toBe(2);
      expect(count(`${before}..main`)).toBe(strategy === "squash" ? 3 : 4);
      expect((await w.t.client.agents.get.query({ agentId: a.id })).merge).toMatchObject({ commit: next.commit, head: next.head, strategy });
      expect((await w.t.client.agents.merge.mutate({ agentId: a.id, strategy })).merged).toBe(false);
      expect(git(w.repo, "worktree", "list")).not.toContain("switchyard-rebase-");

      // main reset to before the merges: the record no longer holds and the whole branch merges again
      git(w.repo, "reset", "-q", "--hard", before);
      const redo = await w.t.client.agents.merge.mutate({ agentId: a.id, strategy });
      expect(redo).toMatchObject({ merged: true, commits: 3 });
      expect(readFileSync(join(w.repo, `${tag}-a.txt`), "utf8")).toBe("2\n");
      expect(count(`${before}..main`, `${tag}-b.txt`)).toBe(1);
    });
  }

  it("a merge commit, then a follow-up: the second merge brings only the new commit", async () => {
    const tag = "again-merge";
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: agentWithFollowUp(tag) });
    await waitForAgent(w.t.client, a.id);
    const first = await w.t.client.agents.merge.mutate({ agentId: a.id });
    expect(first).toMatchObject({ merged: true, strategy: "merge", commits: 2 });
    const again = await w.t.client.agents.merge.mutate({ agentId: a.id, strategy: "squash" });
    expect(again).toMatchObject({ merged: false, reason: `already merged into main as ${first.commit!.slice(0, 8)} (merge): no commits since` });
    await followUp(a.id);
    const mainBefore = git(w.repo, "rev-parse", "main");
    const next = await w.t.client.agents.merge.mutate({ agentId: a.id, strategy: "squash" });
    expect(next).toMatchObject({ merged: true, commits: 1 });
    expect(git(w.repo, "diff", "--name-only", mainBefore, "main")).toBe(`${tag}-a.txt`);
    expect(readFileSync(join(w.repo, `${tag}-a.txt`), "utf8")).toBe("2\n");
  });
});

describe("the sweep and squash-merged branches", () => {
  it("removes the clean worktree of an agent merged by squash (not an ancestor of main: the merge record says so), and not after new commits", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("swept.txt", "swept\n") });
    await waitForAgent(w.t.client, a.id);
    const b = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: commitFile("kept.txt", "kept\n") });
    await waitForAgent(w.t.client, b.id);
    expect((await w.t.client.agents.merge.mutate({ agentId: a.id, strategy: "squash" })).merged).toBe(true);
    expect((await w.t.client.agents.merge.mutate({ agentId: b.id, strategy: "squash" })).merged).toBe(true);
    // b gets one more commit after its merge: its worktree must stay
    git((await w.t.client.agents.get.query({ agentId: b.id })).workspacePath, "commit", "-q", "--allow-empty", "-m", "after the merge");
    const report = await w.t.client.agents.sweep.mutate();
    expect(report.find((r) => r.agentId === a.id)).toMatchObject({ removed: true, note: "merged into main" });
    expect(report.find((r) => r.agentId === b.id)).toMatchObject({ removed: false });
    expect((await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved).toBe(true);
    expect(git(w.repo, "branch", "--list", `switchyard/${a.alias}`)).not.toBe(""); // its branch stays (it has commits)
  });
});
