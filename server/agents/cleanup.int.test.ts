import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";

/** Worktree cleanup when agents go idle (SWITCHYARD_AGENT_CLEANUP=auto, the default), and the sweep. */

let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld({ env: { SWITCHYARD_AGENT_CLEANUP: "auto" } });
});
afterAll(async () => {
  await w?.stop();
});

async function eventsOf(agentId: string): Promise<BusEvent[]> {
  return (await w.t.client.events.list.query({ scope: { kind: "agent", id: agentId }, limit: 5000 })).events as BusEvent[];
}

const branchExists = (branch: string) => git(w.repo, "branch", "--list", branch) !== "";

describe("cleanup when an agent goes idle", () => {
  it("removes a clean worktree with no commits, and its branch", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("look only", [{ text: "nothing to change" }, { done: "looked" }]) });
    const done = await waitForAgent(w.t.client, a.id);
    expect(done.status).toBe("idle");
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved).toBe(true);
    expect(existsSync(done.workspacePath)).toBe(false);
    expect(branchExists(done.branch!)).toBe(false);
    expect(git(w.repo, "worktree", "list")).not.toContain(done.workspacePath);
    const removed = (await eventsOf(a.id)).find((e) => e.type === "worktree.removed");
    expect(removed?.payload).toMatchObject({ branch: null });
  });

  it("asks once for a commit of untracked work, then removes the worktree and keeps the branch; a follow-up restores it", async () => {
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("write notes", [{ write: { path: "notes/plan.md", content: "# plan\n" } }, { done: "wrote the plan" }]),
    });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved, { timeout: 30_000 }).toBe(true);
    const done = await w.t.client.agents.get.query({ agentId: a.id });
    expect(done.status).toBe("idle");
    expect(done.result).toBe("wrote the plan"); // the commit run's own "committed" does not replace it
    expect(done.sessionNumber).toBe(2);
    const events = await eventsOf(a.id);
    expect(events.find((e) => e.type === "agent.resumed")?.payload).toMatchObject({ reason: "commit_request" });
    expect(branchExists(done.branch!)).toBe(true);
    expect(git(w.repo, "show", `${done.branch}:notes/plan.md`)).toBe("# plan");
    // the changes and the diff come from the kept branch
    const changes = await w.t.client.agents.changes.query({ agentId: a.id });
    expect(changes.files.map((f) => f.path)).toEqual(["notes/plan.md"]);
    expect(changes.commitsAhead).toBe(1);
    expect((await w.t.client.agents.diff.query({ agentId: a.id })).patch).toContain("+# plan");

    await w.t.client.agents.message.mutate({ agentId: a.id, text: "one more thing" });
    const again = await waitForAgent(w.t.client, a.id);
    expect(again.status).toBe("idle");
    expect((await eventsOf(a.id)).filter((e) => e.type === "worktree.created")).toHaveLength(2);
    // resumed in the restored worktree, on the same branch, then cleaned up again (clean: nothing new)
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved).toBe(true);
    expect(branchExists(done.branch!)).toBe(true);
  });

  it("an agent that ignores the commit request keeps its worktree and gets a visible warning", async () => {
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("scratch", { steps: [{ write: { path: "scratch.txt", content: "keep me\n" } }, { done: "scratched" }], ignoreCommitRequest: true }),
    });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).cleanupWarning, { timeout: 30_000 }).toMatch(/Uncommitted work was left in .*scratch\.txt/);
    const kept = await w.t.client.agents.get.query({ agentId: a.id });
    expect(kept.workspaceRemoved).toBe(false);
    expect(readFileSync(join(kept.workspacePath, "scratch.txt"), "utf8")).toBe("keep me\n");
    expect((await eventsOf(a.id)).filter((e) => e.type === "agent.resumed")).toHaveLength(1);
    expect((await eventsOf(a.id)).find((e) => e.type === "worktree.kept")?.payload).toMatchObject({ dirty: ["scratch.txt"] });

    // a human commits it and merges: the sweep then measures and removes the merged, clean worktree
    git(kept.workspacePath, "add", "-A");
    git(kept.workspacePath, "commit", "-qm", "keep scratch");
    const report1 = await w.t.client.agents.sweep.mutate();
    const entry1 = report1.find((r) => r.agentId === a.id);
    expect(entry1).toMatchObject({ removed: false });
    expect(entry1!.diskBytes).toBeGreaterThan(8);
    expect((await w.t.client.agents.get.query({ agentId: a.id })).diskBytes).toBe(entry1!.diskBytes);
    const merged = await w.t.client.agents.merge.mutate({ agentId: a.id });
    expect(merged.merged).toBe(true);
    const report2 = await w.t.client.agents.sweep.mutate();
    expect(report2.find((r) => r.agentId === a.id)).toMatchObject({ removed: true });
    expect(existsSync(kept.workspacePath)).toBe(false);
  });
});

describe("cleanup on request", () => {
  it("agents.cleanup refuses uncommitted work unless told to discard it; the branch stays with commits", async () => {
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("two files", { steps: [...[{ write: { path: "kept.txt", content: "k\n" } }, { bash: "git add kept.txt && git -c user.name=a -c user.email=a@b commit -qm kept" }], { write: { path: "loose.txt", content: "l\n" } }, { done: "half committed" }], ignoreCommitRequest: true }),
    });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).cleanupWarning, { timeout: 30_000 }).toBeTruthy();
    await expect(w.t.client.agents.cleanup.mutate({ agentId: a.id })).rejects.toThrow(/uncommitted changes: loose\.txt/);
    const kept = await w.t.client.agents.get.query({ agentId: a.id });
    expect(existsSync(join(kept.workspacePath, "loose.txt"))).toBe(true);
    const cleaned = await w.t.client.agents.cleanup.mutate({ agentId: a.id, discard: true });
    expect(cleaned).toMatchObject({ workspaceRemoved: true, cleanupWarning: null });
    expect(existsSync(kept.workspacePath)).toBe(false);
    expect(git(w.repo, "show", `${kept.branch}:kept.txt`)).toBe("k");
    expect((await eventsOf(a.id)).find((e) => e.type === "worktree.removed")?.payload).toMatchObject({ reason: "cleaned up by a user, uncommitted work discarded" });
  });
});

describe("cleanup in debug mode", () => {
  it("archives a clean worktree before removing it", async () => {
    const d = await startAgentsWorld({ env: { SWITCHYARD_AGENT_CLEANUP: "debug" } });
    try {
      writeFileSync(join(d.repo, "keep.txt"), "x\n");
      git(d.repo, "add", ".");
      git(d.repo, "commit", "-qm", "more");
      const a = await d.t.client.agents.spawn.mutate({ provider: "fake", repo: d.repo, prompt: fakeAgentPrompt("look", [{ done: "looked" }]) });
      await expect.poll(async () => (await d.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved, { timeout: 30_000 }).toBe(true);
      const archived = readdirSync(join(d.t.home, "archive"));
      expect(archived).toHaveLength(1);
      expect(archived[0]!.startsWith(`${a.alias}-`)).toBe(true);
      expect(readFileSync(join(d.t.home, "archive", archived[0]!, "keep.txt"), "utf8")).toBe("x\n");
    } finally {
      await d.stop();
    }
  });
});
