import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRepo, waitForAgent } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, startTestServer, type TestServer } from "../testing/server-harness";

/** `yard agent` against the real server, as a user (or another agent) types it. */
const yard = resolve(import.meta.dirname, "..", "..", "bin", "yard.mjs");
let t: TestServer;
let repo: string;

function runYard(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [yard, ...args], { env: { ...process.env, SWITCHYARD_URL: t.url, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => res({ code, out, err }));
  });
}

beforeAll(async () => {
  t = await startTestServer();
  repo = makeRepo();
});
afterAll(async () => {
  await t.stop();
  removeHome(t.home);
  removeHome(repo);
});

describe("yard agent", () => {
  it("spawns, follows the log until the agent waits, answers, and lists", async () => {
    const prompt = fakeAgentPrompt("cli task", {
      steps: [{ text: "hello from the fake" }, { sleep: 2500 }, { text: "after the pause" }, { questions: [{ id: "q1", question: "Proceed?" }] }],
      resume: [[{ text: "resumed fine" }, { done: "finished from the cli" }]],
    });
    const spawned = await runYard(["agent", "spawn", "--provider", "fake", "--repo", repo, "--prompt", prompt, "--grant", "daemons", "--json"]);
    expect(spawned.code, spawned.err).toBe(0);
    const agent = JSON.parse(spawned.out) as { id: string; alias: string; grants: string[] };
    expect(agent.grants).toEqual(["daemons"]);
    const follow = await runYard(["agent", "logs", agent.id, "-f"]);
    expect(follow.code).toBe(0);
    expect(follow.out).toContain("hello from the fake");
    expect(follow.out).toContain("after the pause"); // printed live, while following
    expect(follow.err).toContain("agent waiting");
    const answered = await runYard(["agent", "resume", agent.id, "--answer", "q1=yes, go on"]);
    expect(answered.code, answered.err).toBe(0);
    const done = await waitForAgent(t.client, agent.id);
    expect(done.result).toBe("finished from the cli");
    const logs = await runYard(["agent", "logs", agent.alias]);
    expect(logs.out).toContain("you: Here are the answers");
    expect(logs.out).toContain("yes, go on");
    expect(logs.out).toContain("✓ result: finished from the cli");
    const list = await runYard(["agent", "list"]);
    expect(list.out).toMatch(new RegExp(`^${agent.alias}\\s+fake\\s+Done\\s`, "m")); // idle, in the dashboard's word
  });

  it("explains bad input and an unknown agent with a non-zero exit", async () => {
    const bad = await runYard(["agent", "resume", "agent_nope", "--answer", "no-equals-sign"]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain("QUESTION_ID=TEXT");
    const grant = await runYard(["agent", "spawn", "--provider", "fake", "--repo", repo, "--prompt", "x", "--grant", "accounts"]);
    expect(grant.code).not.toBe(0);
    expect(grant.err).toContain("grants");
    const missing = await runYard(["agent", "get", "agent_nope"]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('No agent "agent_nope"');
  });

  it("works from inside an agent: the agent's env points yard at the server with an agent token", async () => {
    const a = await t.client.agents.spawn.mutate({
      provider: "fake",
      repo,
      prompt: fakeAgentPrompt("self", [{ bash: 'yard agent get "$SWITCHYARD_AGENT_ID" > me.json && echo "$SWITCHYARD_TOKEN" | cut -c1-4' }, { done: "looked myself up" }]),
    });
    const done = await waitForAgent(t.client, a.id);
    expect(done.status).toBe("idle");
    const out = await t.client.agents.output.query({ agentId: a.id, limit: 50 });
    const result = out.lines.flatMap((l) => l.events).find((e) => e.kind === "tool_result");
    expect(result).toMatchObject({ isError: false, output: "sya." });
  });

  it("merge, then get: the merge shows (human and --json) and a second merge says it is already merged", async () => {
    const a = await t.client.agents.spawn.mutate({
      provider: "fake",
      repo,
      prompt: fakeAgentPrompt("commit", [{ write: { path: "cli-merge.txt", content: "m\n" } }, { bash: 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "cli merge"' }, { done: "committed" }]),
    });
    await waitForAgent(t.client, a.id);
    const merged = await runYard(["agent", "merge", a.alias, "--strategy", "squash", "--json"]);
    expect(merged.code, merged.err).toBe(0);
    const result = JSON.parse(merged.out) as { merged: boolean; commit: string };
    expect(result.merged).toBe(true);
    const human = await runYard(["agent", "get", a.alias]);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toMatch(new RegExp(`^merged {4}into main as ${result.commit.slice(0, 8)} \\(squash\\) at \\S+, nothing new since$`, "m"));
    const json = JSON.parse((await runYard(["agent", "get", a.alias, "--json"])).out) as { merge: { into: string; strategy: string; commit: string } };
    expect(json.merge).toMatchObject({ into: "main", strategy: "squash", commit: result.commit });
    expect((await runYard(["agent", "list"])).out).toMatch(new RegExp(`${a.alias}.*merged into main`));
    const again = JSON.parse((await runYard(["agent", "merge", a.alias, "--strategy", "squash", "--json"])).out) as { merged: boolean; reason: string };
    expect(again).toMatchObject({ merged: false, reason: `already merged into main as ${result.commit.slice(0, 8)} (squash): no commits since` });
  });
});
