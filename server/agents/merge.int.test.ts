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
