import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { agentTestHooks } from "./agents.service";

/** Worktree cleanup when agents go idle (SWITCHYARD_AGENT_CLEANUP=auto, the default), and the sweep. */

let w: AgentsWorld;
let bin: string;
beforeAll(async () => {
  // a CLI without resume (the opencode adapter), played by a script: writes a file and signal.json, never commits
  bin = mkdtempSync(join(tmpdir(), "switchyard-bin-"));
  const script = join(bin, "opencode");
  writeFileSync(script, `#!/bin/sh\necho working\necho d > direct.txt\nmkdir -p .switchyard/output\nprintf '{"status":"done","result":{"message":"direct work"}}' > .switchyard/output/signal.json\n`);
  chmodSync(script, 0o755);
  w = await startAgentsWorld({ env: { SWITCHYARD_AGENT_CLEANUP: "auto", SWITCHYARD_AGENT_AUTOCOMMIT: "on", SWITCHYARD_AGENT_COMMANDS: `opencode=${script}` } });
});
afterAll(async () => {
  await w?.stop();
  rmSync(bin, { recursive: true, force: true });
});

async function eventsOfIn(world: AgentsWorld, agentId: string): Promise<BusEvent[]> {
  return (await world.t.client.events.list.query({ scope: { kind: "agent", id: agentId }, limit: 5000 })).events as BusEvent[];
}
const eventsOf = (agentId: string) => eventsOfIn(w, agentId);

const branchExists = (branch: string, repo = w.repo) => git(repo, "branch", "--list", branch) !== "";

describe("cleanup when an agent goes idle", () => {
  it("removes a clean worktree with no commits, and its branch", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("look only", [{ text: "nothing to change" }, { done: "looked" }]) });
    const done = await waitForAgent(w.t.client, a.id);
    expect(done.status).toBe("idle");
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved).toBe(true);
    expect(existsSync(done.workspacePath)).toBe(false);
    expect(branchExists(done.branch!)).toBe(false);
    expect(git(w.repo, "worktree", "list")).not.toContain(done.workspacePath);
    // the row is written before its event (one transaction for both comes with the agent lifecycle)
    await expect.poll(async () => (await eventsOf(a.id)).find((e) => e.type === "worktree.removed")?.payload).toMatchObject({ branch: null });
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

  it("a commit request answered with a commit but no signal.json keeps the task's result and adds no note (session 1 wrote its signal)", async () => {
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("quiet commit", { steps: [{ write: { path: "quiet.txt", content: "q\n" } }, { done: "wrote quiet.txt" }], commitWithoutSignal: true }),
    });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved, { timeout: 30_000 }).toBe(true);
    const done = await w.t.client.agents.get.query({ agentId: a.id });
    expect(done).toMatchObject({ status: "idle", result: "wrote quiet.txt", statusReason: null, sessionNumber: 2 });
    expect(git(w.repo, "show", `${done.branch}:quiet.txt`)).toBe("q");
  });

  it("an agent that ignores the commit request gets its work committed by Switchyard, as the agent, and merged", async () => {
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("scratch", { steps: [{ write: { path: "scratch.txt", content: "keep me\n" } }, { write: { path: "sub/more.txt", content: "more\n" } }, { done: "Wrote scratch.txt\n\nand a second file" }], ignoreCommitRequest: true }),
    });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved, { timeout: 30_000 }).toBe(true);
    const done = await w.t.client.agents.get.query({ agentId: a.id });
    expect(done).toMatchObject({ status: "idle", cleanupWarning: null, result: "Wrote scratch.txt\n\nand a second file" });
    const events = await eventsOf(a.id);
    expect(events.filter((e) => e.type === "agent.resumed").map((e) => (e.payload as { reason: string }).reason)).toEqual(["commit_request"]);
    const committed = events.find((e) => e.type === "worktree.committed")?.payload as { commit: string; files: string[]; branch: string } | undefined;
    expect(committed).toMatchObject({ branch: done.branch, files: ["scratch.txt", "sub/more.txt"], fileCount: 2 });
    expect(events.some((e) => e.type === "worktree.kept")).toBe(false);
    // on the agent's branch, authored by the agent, the result as the message
    expect(git(w.repo, "rev-parse", done.branch!)).toBe(committed!.commit);
    expect(git(w.repo, "log", "-1", "--format=%an <%ae>", done.branch!)).toBe(`${a.alias} (fake agent) <${a.alias}@agents.switchyard.invalid>`);
    const message = git(w.repo, "log", "-1", "--format=%B", done.branch!);
    expect(message.split("\n")[0]).toBe("Wrote scratch.txt");
    expect(message).toContain("and a second file");
    expect(message).toContain(`Switchyard-Agent: ${a.alias} (${a.id}, fake)`);
    expect(git(w.repo, "show", `${done.branch}:scratch.txt`)).toBe("keep me");
    expect(git(w.repo, "show", "--name-only", "--format=", done.branch!).split("\n")).toEqual(["scratch.txt", "sub/more.txt"]); // .switchyard/ stays out
    const merged = await w.t.client.agents.merge.mutate({ agentId: a.id });
    expect(merged.merged).toBe(true);
    expect(readFileSync(join(w.repo, "scratch.txt"), "utf8")).toBe("keep me\n");
  });

  it("a CLI that cannot be resumed (no commit request possible) gets its work committed at once", async () => {
    // opencode's adapter has no resume: a stand-in script plays the CLI (SWITCHYARD_AGENT_COMMANDS)
    const a = await w.t.client.agents.spawn.mutate({ provider: "opencode", repo: w.repo, prompt: "Write direct.txt" });
    await expect.poll(async () => (await w.t.client.agents.get.query({ agentId: a.id })).workspaceRemoved, { timeout: 30_000 }).toBe(true);
    const done = await w.t.client.agents.get.query({ agentId: a.id });
    expect(done).toMatchObject({ status: "idle", result: "direct work", sessionNumber: 1 });
    expect(git(w.repo, "show", `${done.branch}:direct.txt`)).toBe("d");
    expect(git(w.repo, "log", "-1", "--format=%s%n%an", done.branch!)).toBe(`direct work\n${a.alias} (opencode agent)`);
  });

  it("a follow-up and a merge sent while the cleanup at idle removes the worktree wait for it, then work on what it left (forced)", async () => {
    let release!: () => void;
    let paused!: () => void;
    const inRemoval = new Promise<void>((r) => (paused = r));
    agentTestHooks.beforeWorktreeRemoval = async () => {
      agentTestHooks.beforeWorktreeRemoval = undefined;
      paused();
      await new Promise<void>((r) => (release = r));
    };
    try {
      const a = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("race", { steps: [{ bash: "echo r > race.txt && git add race.txt && git -c user.name=a -c user.email=a@b commit -qm race" }, { done: "raced" }], resume: [[{ done: "followed up" }]] }),
      });
      await inRemoval;
      const message = w.t.client.agents.message.mutate({ agentId: a.id, text: "one more thing" });
      const merge = w.t.client.agents.merge.mutate({ agentId: a.id });
      await new Promise((r) => setTimeout(r, 300));
      let settled = false;
      void Promise.allSettled([message, merge]).then(() => (settled = true));
      await new Promise((r) => setTimeout(r, 100));
      expect(settled).toBe(false); // both wait for the removal
      release();
      expect(await merge).toMatchObject({ merged: true, into: "main" });
      expect(await message).toMatchObject({ delivered: "now" });
      const done = await waitForAgent(w.t.client, a.id, ["idle", "crashed"]);
      expect(done).toMatchObject({ status: "idle", result: "followed up" });
      const events = await eventsOf(a.id);
      expect(events.map((e) => e.type)).toContain("worktree.removed");
      expect(events.filter((e) => e.type === "worktree.created")).toHaveLength(2); // restored for the follow-up
    } finally {
      agentTestHooks.beforeWorktreeRemoval = undefined;
      release?.();
    }
  });
});

describe("with SWITCHYARD_AGENT_AUTOCOMMIT=off", () => {
  let off: AgentsWorld;
  beforeAll(async () => {
    off = await startAgentsWorld({ env: { SWITCHYARD_AGENT_CLEANUP: "auto", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
  });
  afterAll(async () => {
    await off?.stop();
  });

  it("an agent that ignores the commit request keeps its worktree and gets a visible warning", async () => {
    const a = await off.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: off.repo,
      prompt: fakeAgentPrompt("scratch", { steps: [{ write: { path: "scratch.txt", content: "keep me\n" } }, { done: "scratched" }], ignoreCommitRequest: true }),
    });
    await expect.poll(async () => (await off.t.client.agents.get.query({ agentId: a.id })).cleanupWarning, { timeout: 30_000 }).toMatch(/Uncommitted work was left in .*scratch\.txt.*SWITCHYARD_AGENT_AUTOCOMMIT is off/);
    const kept = await off.t.client.agents.get.query({ agentId: a.id });
    expect(kept.workspaceRemoved).toBe(false);
    expect(readFileSync(join(kept.workspacePath, "scratch.txt"), "utf8")).toBe("keep me\n");
    expect((await eventsOfIn(off, a.id)).filter((e) => e.type === "agent.resumed")).toHaveLength(1);
    // the warning is on the row; its event may commit a moment later (PostgreSQL under load)
    await expect.poll(async () => (await eventsOfIn(off, a.id)).find((e) => e.type === "worktree.kept")?.payload, { timeout: 10_000 }).toMatchObject({ dirty: ["scratch.txt"] });

    // a human commits it and merges: the sweep then measures and removes the merged, clean worktree
    git(kept.workspacePath, "add", "-A");
    git(kept.workspacePath, "commit", "-qm", "keep scratch");
    const report1 = await off.t.client.agents.sweep.mutate();
    const entry1 = report1.find((r) => r.agentId === a.id);
    expect(entry1).toMatchObject({ removed: false });
    expect(entry1!.diskBytes).toBeGreaterThan(8);
    expect((await off.t.client.agents.get.query({ agentId: a.id })).diskBytes).toBe(entry1!.diskBytes);
    const merged = await off.t.client.agents.merge.mutate({ agentId: a.id });
    expect(merged.merged).toBe(true);
    const report2 = await off.t.client.agents.sweep.mutate();
    expect(report2.find((r) => r.agentId === a.id)).toMatchObject({ removed: true });
    expect(existsSync(kept.workspacePath)).toBe(false);
  });

  it("agents.cleanup refuses uncommitted work unless told to discard it; the branch stays with commits", async () => {
    const a = await off.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: off.repo,
      prompt: fakeAgentPrompt("two files", { steps: [...[{ write: { path: "kept.txt", content: "k\n" } }, { bash: "git add kept.txt && git -c user.name=a -c user.email=a@b commit -qm kept" }], { write: { path: "loose.txt", content: "l\n" } }, { done: "half committed" }], ignoreCommitRequest: true }),
    });
    await expect.poll(async () => (await off.t.client.agents.get.query({ agentId: a.id })).cleanupWarning, { timeout: 30_000 }).toBeTruthy();
    await expect(off.t.client.agents.cleanup.mutate({ agentId: a.id })).rejects.toThrow(/uncommitted changes: loose\.txt/);
    const kept = await off.t.client.agents.get.query({ agentId: a.id });
    expect(existsSync(join(kept.workspacePath, "loose.txt"))).toBe(true);
    const cleaned = await off.t.client.agents.cleanup.mutate({ agentId: a.id, discard: true });
    expect(cleaned).toMatchObject({ workspaceRemoved: true, cleanupWarning: null });
    expect(existsSync(kept.workspacePath)).toBe(false);
    expect(git(off.repo, "show", `${kept.branch}:kept.txt`)).toBe("k");
    expect((await eventsOfIn(off, a.id)).find((e) => e.type === "worktree.removed")?.payload).toMatchObject({ reason: "cleaned up by a user, uncommitted work discarded" });
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
