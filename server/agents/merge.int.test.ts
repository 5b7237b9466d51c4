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
});
