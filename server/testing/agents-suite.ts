import { TRPCClientError } from "@trpc/client";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "./agents-world";
import { fakeAgentPrompt } from "./fake-agent";

/**
 * The agents integration suite, run once per agent host (agents.int.test.ts: the local host;
 * agents-loopback.int.test.ts: the same through a JSON round trip of every call of the seam).
 */
let w: AgentsWorld;

export function agentsSuite(agentHost: "local" | "loopback"): void {
  beforeAll(async () => {
    w = await startAgentsWorld({ agentHost });
  });
  afterAll(async () => {
    await w?.stop();
  });

  async function eventsOf(agentId: string): Promise<BusEvent[]> {
    const page = await w.t.client.events.list.query({ scope: { kind: "agent", id: agentId }, limit: 5000 });
    return page.events as BusEvent[];
  }

  describe("the repository an agent works on", () => {
    it("refuses a folder that is not a git repository (REPO_NOT_GIT, naming it) and records no agent; --init makes one", async () => {
      const plain = mkdtempSync(join(tmpdir(), "switchyard-plain-"));
      try {
        writeFileSync(join(plain, "idea.md"), "an idea\n");
        const before = (await w.t.client.agents.list.query()).items.length;
        const err = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: plain, prompt: fakeAgentPrompt("x", [{ done: "x" }]) }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TRPCClientError);
        expect((err as TRPCClientError<never>).data).toMatchObject({ appCode: "REPO_NOT_GIT" });
        expect((err as Error).message).toContain(plain);
        expect((await w.t.client.agents.list.query()).items.length).toBe(before);
        expect(existsSync(join(plain, ".git"))).toBe(false);

        const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: plain, init: true, prompt: fakeAgentPrompt("read", [{ bash: "cat idea.md" }, { done: "read it" }]) });
        expect(agent).toMatchObject({ workspaceKind: "worktree", branch: `switchyard/${agent.alias}` });
        const done = await waitForAgent(w.t.client, agent.id);
        expect(done.status).toBe("idle");
        expect(readFileSync(join(done.workspacePath, "idea.md"), "utf8")).toBe("an idea\n");
        expect(git(plain, "log", "--format=%s")).toContain("Initial commit");
      } finally {
        rmSync(plain, { recursive: true, force: true });
      }
    });
  });

  describe("CLI agents with the fake agent CLI", () => {
    it("spawns in a worktree on its own branch, streams, persists and finishes from signal.json", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("write hello", [{ text: "working" }, { write: { path: "hello.txt", content: "hi\n" } }, { bash: "git add -A && git -c user.name=a -c user.email=a@b commit -qm hello" }, { done: "wrote hello.txt" }]),
      });
      expect(agent.branch).toBe(`switchyard/${agent.alias}`);
      expect(agent.alias).toMatch(/^[a-z]+-[a-z]+(-\d+)?$/);
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done.status).toBe("idle");
      expect(done.result).toBe("wrote hello.txt");
      expect(readFileSync(join(done.workspacePath, "hello.txt"), "utf8")).toBe("hi\n");
      expect(existsSync(join(w.repo, "hello.txt"))).toBe(false);
      expect(git(w.repo, "log", "--format=%s", "-1", done.branch!)).toBe("hello");
      // .switchyard/ stays out of git status
      expect(git(done.workspacePath, "status", "--porcelain")).toBe("");
      const out = await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 100 });
      expect(out.totalLines).toBe(out.lines.length);
      expect(out.lines.map((l) => l.line)).toEqual(out.lines.map((_, i) => i));
      const kinds = out.lines.flatMap((l) => l.events.map((e) => e.kind));
      expect(kinds[0]).toBe("session");
      expect(kinds).toContain("tool_call");
      const result = out.lines.flatMap((l) => l.events).find((e) => e.kind === "tool_result");
      expect(result).toMatchObject({ name: "Write", isError: false });
      const types = (await eventsOf(agent.id)).map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(["worktree.created", "agent.spawned", "agent.output_produced", "agent.went_idle"]));
      expect(types.indexOf("worktree.created")).toBeLessThan(types.indexOf("agent.went_idle"));
      const info = JSON.parse(readFileSync(join(done.workspacePath, ".switchyard", "input", "manifest.json"), "utf8"));
      expect(info).toMatchObject({ agentId: agent.id, alias: agent.alias, mode: "execute" });
      expect(done.prompt).toContain("signal.json");
    });

    it("asks questions, waits for a human, resumes on the same session with the answers", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("needs input", {
          steps: [{ questions: [{ id: "q1", question: "Which colour?" }, { id: "q2", question: "Which size?" }] }],
          resume: [[{ text: "thanks" }, { done: "used the answers" }]],
        }),
      });
      const waiting = await waitForAgent(w.t.client, agent.id);
      expect(waiting.status).toBe("waiting_for_input");
      expect(waiting.pendingQuestions.map((q) => q.id)).toEqual(["q1", "q2"]);
      await expect(w.t.client.agents.resume.mutate({ agentId: agent.id, answers: { q1: "blue" } })).rejects.toThrow(/q2/);
      await w.t.client.agents.resume.mutate({ agentId: agent.id, answers: { q1: "blue", q2: "large" } });
      const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed"]);
      expect(done.status).toBe("idle");
      expect(done.result).toBe("used the answers");
      expect(done.sessionNumber).toBe(2);
      expect(done.sessionId).toBe(waiting.sessionId);
      const out = await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 200 });
      const system = out.lines.flatMap((l) => l.events).filter((e) => e.kind === "system");
      expect(system.some((e) => e.kind === "system" && e.subtype === "user_message" && e.message.includes("large"))).toBe(true);
      const sessions = out.lines.filter((l) => l.events.some((e) => e.kind === "session")).map((l) => l.session);
      expect(sessions).toEqual([1, 2]);
    });

    it("finishes a CLI that hangs after its result once the grace period is over", async () => {
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("hang", [{ done: "finished then hung" }, { hang: true }]) });
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done.status).toBe("idle");
      expect(done.result).toBe("finished then hung");
      expect(done.pid).toBeNull();
    });

    it("marks a crash mid-stream as crashed with the reason, keeping its output", async () => {
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("crash", [{ text: "about to fail" }, { stderr: "segfault-ish" }, { crash: 3 }]) });
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done.status).toBe("crashed");
      expect(done.statusReason).toMatch(/code 3/);
      expect(done.statusReason).toMatch(/segfault-ish/);
      const out = await w.t.client.agents.output.query({ agentId: agent.id, limit: 50 });
      expect(out.lines.flatMap((l) => l.events).some((e) => e.kind === "text" && e.text === "about to fail")).toBe(true);
    });

    it("resumes once to ask for a missing signal, then takes the result line", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("no signal", { steps: [{ text: "done but forgot" }, { result: "forgot the signal" }], resume: [[{ done: "signal written now" }]] }),
      });
      const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"]);
      expect(done.status).toBe("idle");
      expect(done.result).toBe("signal written now");
      expect(done.sessionNumber).toBe(2);
      const types = (await eventsOf(agent.id)).map((e) => e.type);
      expect(types.filter((t) => t === "agent.resumed")).toHaveLength(1);
    });

    it("takes the result line when the retry also writes no signal", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("no signal twice", { steps: [{ result: "first" }], resume: [[{ result: "second" }]] }),
      });
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done).toMatchObject({ status: "idle", result: "second", sessionNumber: 2 });
      expect(done.statusReason).toMatch(/without signal.json/);
    });

    it("treats is_error as failure whatever the subtype says, and rate limits as crashes with the reset time", async () => {
      const failed = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("fail", [{ result: "API Error: 500", isError: true, subtype: "success" }]) });
      const limited = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("limit", [{ rateLimit: { resetsAt: "2030-01-01T00:00:00.000Z" } }]) });
      expect(await waitForAgent(w.t.client, failed.id)).toMatchObject({ status: "crashed", statusReason: expect.stringMatching(/API Error: 500/) });
      expect(await waitForAgent(w.t.client, limited.id)).toMatchObject({ status: "crashed", statusReason: expect.stringMatching(/usage limit/) });
      const out = await w.t.client.agents.output.query({ agentId: limited.id, limit: 50 });
      const rl = out.lines.flatMap((l) => l.events).find((e) => e.kind === "rate_limit");
      expect(rl).toMatchObject({ resetsAt: "2030-01-01T00:00:00.000Z" });
    });

    it("persists a 20 MB line and pages it cut, with the raw line on demand", async () => {
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("huge", [{ hugeLine: 20_000_000 }, { done: "big" }]) });
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done.status).toBe("idle");
      const out = await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 1, limit: 1 });
      const line = out.lines[0]!;
      expect(line.bytes).toBeGreaterThan(20_000_000);
      expect(line.truncated).toBe(true);
      const text = line.events.find((e) => e.kind === "text");
      expect(text && text.kind === "text" && text.text.length).toBe(64 * 1024);
      const raw = await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 1, limit: 1, format: "raw", maxFieldBytes: 32 * 1024 * 1024 });
      expect(JSON.parse(raw.lines[0]!.raw!).message.content[0].text).toHaveLength(20_000_000);
    });

    it("a page of a writing agent's log and agents.onOutput resumed from its lastEventId: every line, none missing", async () => {
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("log", [{ lines: { count: 3000, perSecond: 3000 } }, { done: "done" }]) });
      let page = await w.t.client.agents.output.query({ agentId: agent.id, limit: 5000, fromLine: 0 });
      while (page.totalLines < 100) page = await w.t.client.agents.output.query({ agentId: agent.id, limit: 5000, fromLine: 0 });
      const seen = new Set(page.lines.map((l) => l.line));
      await new Promise<void>((resolve, reject) => {
        const sub = w.t.client.agents.onOutput.subscribe(
          { agentId: agent.id, lastEventId: String(page.lastEventId) },
          {
            onData: ({ data }) => {
              for (const l of data.lines) seen.add(l.line);
              if (!data.events.some((e) => e.type === "agent.went_idle")) return;
              sub.unsubscribe();
              resolve();
            },
            onError: reject,
          },
        );
      });
      const { totalLines } = await w.t.client.agents.output.query({ agentId: agent.id, limit: 1 });
      expect(totalLines).toBeGreaterThan(page.totalLines);
      expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: totalLines }, (_, i) => i));
    });

    it("queues a message for a running agent and delivers it at the next idle point", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        prompt: fakeAgentPrompt("slow", { steps: [{ sleep: 1500 }, { done: "first turn" }], resume: [[{ done: "handled the follow-up" }]] }),
      });
      const r = await w.t.client.agents.message.mutate({ agentId: agent.id, text: "also do X" });
      expect(r.delivered).toBe("queued");
      expect(r.agent.queuedMessages.map((m) => m.text)).toEqual(["also do X"]);
      await waitForAgent(w.t.client, agent.id, ["starting", "running"]);
      const deadline = Date.now() + 30_000;
      let done = await w.t.client.agents.get.query({ agentId: agent.id });
      while (!(done.status === "idle" && done.sessionNumber === 2) && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 100));
        done = await w.t.client.agents.get.query({ agentId: agent.id });
      }
      expect(done).toMatchObject({ status: "idle", result: "handled the follow-up", sessionNumber: 2, queuedMessages: [] });
      // a message to an idle agent resumes it at once
      const now = await w.t.client.agents.message.mutate({ agentId: agent.id, text: "one more" });
      expect(now.delivered).toBe("now");
      expect((await waitForAgent(w.t.client, agent.id)).sessionNumber).toBe(3);
    });

    it("routes an ask-mode tool call to a human and waits: allowed runs it, denied does not", async () => {
      const agent = await w.t.client.agents.spawn.mutate({
        provider: "fake",
        repo: w.repo,
        permissionMode: "ask",
        prompt: fakeAgentPrompt("approve", [
          { permission: { tool: "Bash", input: { command: "touch allowed.txt" } } },
          { permission: { tool: "Bash", input: { command: "touch denied.txt" } } },
          { done: "asked twice" },
        ]),
      });
      const first = await waitForApproval(agent.id, 1);
      expect(first).toMatchObject({ toolName: "Bash", input: { command: "touch allowed.txt" }, status: "pending" });
      await new Promise((r) => setTimeout(r, 700)); // nothing is auto-denied while a human thinks
      expect((await w.t.client.agents.get.query({ agentId: agent.id })).status).toBe("running");
      await w.t.client.agents.decide.mutate({ approvalId: first.id, allow: true });
      const second = await waitForApproval(agent.id, 2);
      await w.t.client.agents.decide.mutate({ approvalId: second.id, allow: false, message: "not that one" });
      const done = await waitForAgent(w.t.client, agent.id);
      expect(done.status).toBe("idle");
      expect(existsSync(join(done.workspacePath, "allowed.txt"))).toBe(true);
      expect(existsSync(join(done.workspacePath, "denied.txt"))).toBe(false);
      const results = (await w.t.client.agents.output.query({ agentId: agent.id, limit: 100 })).lines.flatMap((l) => l.events).filter((e) => e.kind === "tool_result");
      expect(results.map((r) => r.kind === "tool_result" && r.isError)).toEqual([false, true]);
    });

    it("stops a running agent (its process group is gone), and delete refuses a dirty worktree unless forced", async () => {
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("hang", [{ write: { path: "wip.txt", content: "wip" } }, { hang: true }]) });
      await waitForOutput(agent.id, 3);
      const running = await w.t.client.agents.get.query({ agentId: agent.id });
      const stopped = await w.t.client.agents.stop.mutate({ agentId: agent.id });
      expect(stopped.status).toBe("stopped");
      expect(() => process.kill(running.pid!, 0)).toThrow();
      await expect(w.t.client.agents.delete.mutate({ agentId: agent.id })).rejects.toThrow(/uncommitted changes: wip.txt/);
      expect(existsSync(stopped.workspacePath)).toBe(true);
      await w.t.client.agents.delete.mutate({ agentId: agent.id, force: true });
      expect(existsSync(stopped.workspacePath)).toBe(false);
      await expect(w.t.client.agents.get.query({ agentId: agent.id })).rejects.toThrow(/No agent/);
      // the log outlives the agent
      expect((await w.t.client.agents.output.query({ agentId: agent.id, limit: 10 })).totalLines).toBeGreaterThan(0);
    });

    it("rejects bad spawns with clear errors and never touches the main checkout", async () => {
      await expect(w.t.client.agents.spawn.mutate({ provider: "nope", repo: w.repo, prompt: "x" })).rejects.toThrow(/Unknown agent provider "nope"/);
      await expect(w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, baseRef: "no-such-branch", prompt: "x" })).rejects.toThrow(/no-such-branch/);
      git(w.repo, "branch", "switchyard/taken-alias");
      await expect(w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, alias: "taken-alias", prompt: "x" })).rejects.toThrow(/already exists/);
      expect(git(w.repo, "status", "--porcelain")).toBe("");
      expect(git(w.repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
    });

    it("agents.onUpdate replays lifecycle changes after lastEventId, each with the agent as it is now", async () => {
      const { lastEventId } = await w.t.client.system.info.query();
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("watched", [{ text: "hi" }, { done: "watched done" }]) });
      await waitForAgent(w.t.client, agent.id);
      // subscribed after the fact: everything since the cursor is replayed, output excluded
      const seen: string[] = [];
      let last: { status: string } | undefined;
      await new Promise<void>((resolve, reject) => {
        const sub = w.t.client.agents.onUpdate.subscribe(
          { lastEventId: String(lastEventId) },
          {
            onData: ({ data }) => {
              for (const e of data.events) if (e.scope.agentId === agent.id) seen.push(e.type);
              const mine = data.agents.find((a) => a.id === agent.id);
              if (mine && "status" in mine) last = mine;
              if (seen.includes("agent.went_idle")) {
                sub.unsubscribe();
                resolve();
              }
            },
            onError: reject,
          },
        );
      });
      expect(seen).toEqual(expect.arrayContaining(["worktree.created", "agent.spawned", "agent.went_idle"]));
      expect(seen).not.toContain("agent.output_produced");
      expect(last).toMatchObject({ status: "idle" });
    });

    it("runs 50 agents at once to completion", async () => {
      const agents = await Promise.all(
        Array.from({ length: 50 }, (_, i) => w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt(`n${i}`, [{ text: `agent ${i}` }, { done: `ok ${i}` }]) })),
      );
      const done = await Promise.all(agents.map((a) => waitForAgent(w.t.client, a.id, ["idle", "crashed"], 120_000)));
      expect(done.map((d) => d.status)).toEqual(Array(50).fill("idle"));
      expect(new Set(done.map((d) => d.alias)).size).toBe(50);
      expect(done.map((d) => d.result)).toEqual(agents.map((_, i) => `ok ${i}`));
    });
  });
}

async function waitForApproval(agentId: string, count: number) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const all = await w.t.client.agents.approvals.query({ agentId });
    if (all.length >= count) return all[count - 1]!;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no approval request arrived");
}

async function waitForOutput(agentId: string, lines: number) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await w.t.client.agents.get.query({ agentId })).lineCount >= lines) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no output");
}
