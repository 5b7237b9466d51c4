import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../paths";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeReplyInput, RecordedRequest } from "../testing/fake-model";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";

/**
 * The REAL pinned `claude` and `codex` CLIs (devDependencies) against the fake model server: they
 * must be installed (CI fails otherwise), and the fake must see their requests.
 */

let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld({ env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
});
afterAll(async () => {
  w.fake.setHandler(undefined);
  await w?.stop();
});

const SIGNAL_RE = /(\/[^\s"`\\]+)\/\.switchyard\/output\/signal\.json/;

function workspaceOf(req: RecordedRequest): string {
  const m = SIGNAL_RE.exec(JSON.stringify(req.body));
  if (!m) throw new Error("the prompt names no signal.json path");
  return m[1]!;
}

const write = (file_path: string, content: string): FakeReplyInput => ({ kind: "turn", text: "Writing.", toolCalls: [{ name: "Write", input: { file_path, content } }] });

describe("real Claude Code against the fake model", () => {
  it("writes a file in its worktree, asks a question, resumes on the same session with the answer", async () => {
    let turn = 0;
    w.fake.setHandler((req) => {
      if (req.api !== "anthropic" || !req.script.offeredTools.includes("Write")) return undefined;
      const ws = workspaceOf(req);
      const signal = join(ws, ".switchyard", "output", "signal.json");
      turn++;
      if (turn === 1) return write(join(ws, "claude.txt"), "written by claude\n");
      if (turn === 2) return write(signal, JSON.stringify({ status: "questions", questions: [{ id: "q1", question: "Which greeting?" }] }));
      if (turn === 3) return "I have a question for you.";
      if (turn === 4) return write(signal, JSON.stringify({ status: "done", result: { message: "greeted as asked" } }));
      return "All done.";
    });
    const agent = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "Create claude.txt. REAL_CLAUDE_TASK", permissionMode: "acceptEdits" });
    const waiting = await waitForAgent(w.t.client, agent.id, ["waiting_for_input", "idle", "crashed"], 90_000);
    expect(waiting.status, waiting.statusReason ?? "").toBe("waiting_for_input");
    expect(waiting.pendingQuestions).toEqual([{ id: "q1", question: "Which greeting?" }]);
    const main = w.fake.requests.filter((r) => r.api === "anthropic" && r.script.offeredTools.includes("Write"));
    const firstUser = (main[0]!.body.messages as Array<{ content: Array<{ text?: string }> | string }>)[0]!.content;
    const firstText = typeof firstUser === "string" ? firstUser : (firstUser[0]?.text ?? "");
    expect(firstText.startsWith("<system-reminder>")).toBe(true);
    expect(readFileSync(join(waiting.workspacePath, "claude.txt"), "utf8")).toBe("written by claude\n");
    expect(existsSync(join(w.repo, "claude.txt"))).toBe(false);
    expect(git(waiting.workspacePath, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`switchyard/${agent.alias}`);

    await w.t.client.agents.resume.mutate({ agentId: agent.id, answers: { q1: "Say ahoy" } });
    const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.result).toBe("greeted as asked");
    expect(done.sessionNumber).toBe(2);
    expect(done.sessionId).toBe(waiting.sessionId);
    const resumed = w.fake.requests.filter((r) => r.api === "anthropic" && r.script.offeredTools.includes("Write")).at(-2)!;
    const body = JSON.stringify(resumed.body);
    expect(body).toContain("Say ahoy");
    expect(body).toContain("Create claude.txt"); // the same session: the earlier turns come along
    expect(done.usage.outputTokens).toBeGreaterThan(0);
  });

  it("in ask mode routes its permission prompt to a human through our MCP tool", async () => {
    let turn = 0;
    w.fake.setHandler((req) => {
      if (req.api !== "anthropic" || !req.script.offeredTools.includes("Bash")) return undefined;
      turn++;
      if (turn === 1) return { kind: "turn", text: "Running.", toolCalls: [{ name: "Bash", input: { command: "touch approved.txt", description: "make a file" } }] };
      const ws = workspaceOf(req);
      if (turn === 2) return write(join(ws, ".switchyard", "output", "signal.json"), JSON.stringify({ status: "done", result: { message: "approved and ran" } }));
      return "Finished.";
    });
    const agent = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "Touch a file. REAL_CLAUDE_ASK", permissionMode: "ask" });
    const deadline = Date.now() + 60_000;
    let pending: Awaited<ReturnType<typeof w.t.client.agents.approvals.query>> = [];
    while (pending.length === 0 && Date.now() < deadline) {
      pending = await w.t.client.agents.approvals.query({ agentId: agent.id, status: "pending" });
      const now = await w.t.client.agents.get.query({ agentId: agent.id });
      if (now.status !== "running") throw new Error(`agent ended before asking: ${now.status} ${now.statusReason}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(pending[0]).toMatchObject({ toolName: "Bash", input: { command: "touch approved.txt" } });
    expect(existsSync(join(agent.workspacePath, "approved.txt"))).toBe(false);
    // approve this one and whatever it asks next (writing signal.json needs approval too in ask mode)
    const decided = new Set<string>();
    const finished = waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"], 60_000);
    let settled = false;
    void finished.finally(() => (settled = true)).catch(() => undefined);
    while (!settled) {
      for (const a of await w.t.client.agents.approvals.query({ agentId: agent.id, status: "pending" })) {
        if (decided.has(a.id)) continue;
        decided.add(a.id);
        await w.t.client.agents.decide.mutate({ approvalId: a.id, allow: true });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const done = await finished;
    expect(decided.size).toBeGreaterThanOrEqual(2);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(existsSync(join(done.workspacePath, "approved.txt"))).toBe(true);
  });
});

describe("real Claude Code: AskUserQuestion", () => {
  it("in ask mode turns AskUserQuestion into a question a human answers; the model gets the answer", async () => {
    let turn = 0;
    w.fake.setHandler((req) => {
      if (req.api !== "anthropic" || !req.script.offeredTools.includes("Write")) return undefined;
      turn++;
      if (turn === 1) {
        const input = { questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }], multiSelect: false }] };
        return { kind: "turn", text: "Asking.", toolCalls: [{ name: "AskUserQuestion", input }] };
      }
      if (turn === 2) return write(join(workspaceOf(req), ".switchyard", "output", "signal.json"), JSON.stringify({ status: "done", result: { message: `got ${req.script.toolResult ?? ""}` } }));
      return "Done.";
    });
    const agent = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "Ask me a colour. REAL_CLAUDE_AUQ", permissionMode: "ask" });
    const deadline = Date.now() + 60_000;
    let asked: Awaited<ReturnType<typeof w.t.client.agents.approvals.query>>[number] | undefined;
    while (!asked && Date.now() < deadline) {
      asked = (await w.t.client.agents.approvals.query({ agentId: agent.id, status: "pending" })).find((a) => a.toolName === "AskUserQuestion");
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(asked, "no AskUserQuestion approval").toBeDefined();
    const inbox = await w.t.client.inbox.list.query();
    expect(inbox.items.some((i) => i.kind === "agent_approval" && i.id === asked!.id)).toBe(true);
    await w.t.client.agents.decide.mutate({ approvalId: asked!.id, allow: true, updatedInput: { ...(asked!.input as object), answers: { "Which colour?": "Blue" } } });
    // the Write of signal.json asks too: allow what follows
    const end = Date.now() + 60_000;
    let done = await w.t.client.agents.get.query({ agentId: agent.id });
    while (done.status === "running" && Date.now() < end) {
      for (const a of await w.t.client.agents.approvals.query({ agentId: agent.id, status: "pending" })) await w.t.client.agents.decide.mutate({ approvalId: a.id, allow: true });
      await new Promise((r) => setTimeout(r, 150));
      done = await w.t.client.agents.get.query({ agentId: agent.id });
    }
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.result).toContain("Blue");
  });
});

describe("real Codex against the fake model", () => {
  it("runs a command in its worktree through /v1/responses and finishes", async () => {
    w.fake.setHandler(undefined);
    const before = w.fake.requests.length;
    const agent = await w.t.client.agents.spawn.mutate({
      provider: "codex",
      repo: w.repo,
      prompt: 'Make a file. USE_TOOL[exec_command]{"cmd":"echo hi > codex.txt"}',
      permissionMode: "acceptEdits",
      // a model codex has no metadata for gets the generic tool set (its defaults get none from a fake)
      model: "fake-model",
    });
    const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const calls = w.fake.requests.slice(before);
    expect(calls.some((r) => r.path === "/v1/responses")).toBe(true);
    if (!existsSync(join(done.workspacePath, "codex.txt"))) {
      const out = await w.t.client.agents.output.query({ agentId: agent.id, limit: 50, format: "raw" });
      throw new Error(`no codex.txt:\n${out.lines.map((l) => l.raw?.slice(0, 300)).join("\n")}\n${JSON.stringify(calls.map((r) => [r.path, Object.keys(r.body), String(JSON.stringify(r.body.tools ?? null)).slice(0, 1500), r.body.model]))}`);
    }
    expect(readFileSync(join(done.workspacePath, "codex.txt"), "utf8")).toBe("hi\n");
    expect(existsSync(join(w.repo, "codex.txt"))).toBe(false);
    expect(done.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // no signal.json: resumed once on the same thread to ask for it
    expect(done.sessionNumber).toBe(2);
    const out = await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 500 });
    const events = out.lines.flatMap((l) => l.events);
    expect(events.some((e) => e.kind === "tool_call" && e.name === "exec_command")).toBe(true);
    expect(events.some((e) => e.kind === "error" && !e.fatal)).toBe(true); // the model-metadata warning
  });
});

/**
 * The agents' work lands: each real CLI, in its DEFAULT permission mode, commits on its branch by
 * itself (autocommit is off in this world, so a commit on the branch is the CLI's own), and merge
 * brings it to main. The repository lies outside /tmp (codex's sandbox may write /tmp anyway), so
 * the codex case also shows what stays read-only: hooks and main.
 */
describe("real CLIs commit in their default modes", () => {
  let repo: string;
  beforeAll(() => {
    const parent = join(REPO_ROOT, "node_modules", ".cache", "switchyard-tests");
    mkdirSync(parent, { recursive: true });
    repo = mkdtempSync(join(parent, "repo-"));
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "# test repo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "initial");
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it("Claude Code (acceptEdits) commits with git add && git commit, heredoc message and all; merge brings it to main", async () => {
    let turn = 0;
    w.fake.setHandler((req) => {
      if (req.api !== "anthropic" || !req.script.offeredTools.includes("Bash")) return undefined;
      const ws = workspaceOf(req);
      turn++;
      if (turn === 1) return write(join(ws, "from-claude.txt"), "claude was here\n");
      if (turn === 2) {
        const command = `git add -A && git commit -m "$(cat <<'EOF'\nAdd from-claude.txt\n\nWritten by the test.\nEOF\n)" && git status --short && git log --oneline -1`;
        return { kind: "turn", text: "Committing.", toolCalls: [{ name: "Bash", input: { command, description: "Commit the change" } }] };
      }
      if (turn === 3) return write(join(ws, ".switchyard", "output", "signal.json"), JSON.stringify({ status: "done", result: { message: "added from-claude.txt" } }));
      return "Done.";
    });
    const agent = await w.t.client.agents.spawn.mutate({ provider: "claude", repo, prompt: "Add a file and commit it. REAL_CLAUDE_COMMIT" });
    expect(agent.permissionMode).toBe("acceptEdits");
    const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const results = (await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 500 })).lines.flatMap((l) => l.events).filter((e) => e.kind === "tool_result");
    expect(results.find((e) => e.kind === "tool_result" && e.name === "Bash"), JSON.stringify(results)).toMatchObject({ isError: false });
    expect(git(repo, "log", "-1", "--format=%s", done.branch!)).toBe("Add from-claude.txt");
    expect(git(done.workspacePath, "status", "--porcelain")).toBe("");
    const merged = await w.t.client.agents.merge.mutate({ agentId: agent.id });
    expect(merged.merged).toBe(true);
    expect(git(repo, "show", "main:from-claude.txt")).toBe("claude was here");
  });

  it("Codex (workspace-write sandbox) commits on its branch while hooks and main stay read-only; merge brings it to main", async () => {
    let turn = 0;
    w.fake.setHandler((req) => {
      if (req.api === "anthropic") return undefined;
      turn++;
      if (turn !== 1) return undefined; // the fake's default answer ends the turn
      const cmd = [
        "echo 'codex was here' > from-codex.txt",
        "git add -A && git commit -q -m 'Add from-codex.txt' && echo COMMITTED-$((1+1))",
        'echo x > "$(git rev-parse --git-common-dir)/hooks/post-commit" && echo HOOK-$((1+1))',
        'echo x > "$(git rev-parse --git-common-dir)/refs/heads/main" && echo MAIN-$((1+1))',
        "true",
      ].join("; ");
      return { kind: "turn", text: "Committing.", toolCalls: [{ name: "exec_command", input: { cmd } }] };
    });
    const agent = await w.t.client.agents.spawn.mutate({ provider: "codex", repo, prompt: "Add a file and commit it.", model: "fake-model" });
    expect(agent.permissionMode).toBe("acceptEdits");
    const done = await waitForAgent(w.t.client, agent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const raw = (await w.t.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 500, format: "raw" })).lines.map((l) => l.raw ?? "").join("\n");
    // the markers print "-2" only when a command succeeded (the command line itself holds "$((1+1))")
    expect(raw).toContain("COMMITTED-2");
    expect(raw).not.toContain("HOOK-2");
    expect(raw).not.toContain("MAIN-2");
    expect(raw).toContain("Read-only file system");
    expect(existsSync(join(repo, ".git", "hooks", "post-commit"))).toBe(false);
    expect(git(repo, "log", "-1", "--format=%s", done.branch!)).toBe("Add from-codex.txt");
    const merged = await w.t.client.agents.merge.mutate({ agentId: agent.id, strategy: "squash" });
    expect(merged.merged).toBe(true);
    expect(git(repo, "show", "main:from-codex.txt")).toBe("codex was here");
    expect(git(repo, "log", "--format=%s", "main")).toContain("initial");
  });
});

describe("real Claude Code with the switchyard MCP server it gets at spawn", () => {
  for (const permissionMode of ["bypass", "acceptEdits", "ask"] as const) {
    it(`${permissionMode}: spawns a helper through mcp__switchyard__spawn_agent, waits for it, and gets its result back (no tool goes to a human)`, async () => {
      const childPrompt = fakeAgentPrompt("helper", [{ done: "the helper's answer is 42" }]);
      let turn = 0;
      let childId = "";
      w.fake.setHandler((req) => {
        if (req.api !== "anthropic" || !req.script.offeredTools.includes("mcp__switchyard__spawn_agent")) return undefined;
        turn++;
        if (turn === 1) return { kind: "turn", text: "Spawning a helper.", toolCalls: [{ name: "mcp__switchyard__spawn_agent", input: { provider: "fake", prompt: childPrompt } }] };
        if (turn === 2) {
          childId = /agent_[0-9a-f-]{36}/.exec(req.script.toolResult ?? "")?.[0] ?? "";
          return { kind: "turn", text: "Waiting for it.", toolCalls: [{ name: "mcp__switchyard__wait_for_agent", input: { agentId: childId, timeoutSeconds: 40 } }] };
        }
        if (turn === 3) {
          const heard = /42/.test(req.script.toolResult ?? "") ? "the helper said 42" : `no answer: ${(req.script.toolResult ?? "").slice(0, 200)}`;
          return write(join(workspaceOf(req), ".switchyard", "output", "signal.json"), JSON.stringify({ status: "done", result: { message: heard } }));
        }
        return "Done.";
      });
      const parent = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: `Get a helper to answer. REAL_CLAUDE_MCP_${permissionMode}`, permissionMode });
      // a Write of signal.json in ask mode goes to a human: approve only that one; the Switchyard tools never ask
      const finished = waitForAgent(w.t.client, parent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
      let settled = false;
      void finished.finally(() => (settled = true)).catch(() => undefined);
      const asked: string[] = [];
      while (!settled) {
        for (const a of await w.t.client.agents.approvals.query({ agentId: parent.id, status: "pending" })) {
          asked.push(a.toolName);
          await w.t.client.agents.decide.mutate({ approvalId: a.id, allow: true });
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const done = await finished;
      expect(done.status, done.statusReason ?? "").toBe("idle");
      expect(done.result).toBe("the helper said 42");
      expect(asked.filter((t) => t.startsWith("mcp__switchyard"))).toEqual([]);
      const child = await w.t.client.agents.get.query({ agentId: childId });
      expect(child).toMatchObject({ parentAgentId: parent.id, status: "idle", result: "the helper's answer is 42", repoPath: parent.repoPath });
      // the dashboard's tree (AgentFamily, the Agents list grouped by tree) reads agents.list: the child sits under the parent
      const listed = (await w.t.client.agents.list.query({})).items;
      expect(listed.find((a) => a.id === childId)?.parentAgentId).toBe(parent.id);
      expect(listed.find((a) => a.id === parent.id)?.parentAgentId).toBeNull();
      // the token is in a file only the agent's user reads, never in argv
      const config = join(w.t.home, "agents", parent.id, "mcp.json");
      expect(statSync(config).mode & 0o777).toBe(0o600);
      expect(readFileSync(config, "utf8")).toContain(`/mcp/agents/${parent.id}`);
    }, 120_000);
  }
});
