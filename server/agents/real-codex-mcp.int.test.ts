import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeReplyInput, RecordedRequest } from "../testing/fake-model";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";

/**
 * The REAL pinned `codex` CLI with the `switchyard` MCP server it gets at spawn (`[mcp_servers.switchyard]`
 * in its CODEX_HOME's config.toml, the token from SWITCHYARD_TOKEN). Codex 0.169 offers an MCP
 * server's tools to the model as ONE Responses-API tool of type `namespace`, named
 * `mcp__switchyard`, whose `tools` are the server's own names (`spawn_agent`, ...); the model calls
 * one with a `function_call` item carrying `namespace: "mcp__switchyard"` and `name: "spawn_agent"`
 * (a flat `mcp__switchyard__spawn_agent` is answered "unsupported call"). The tool's result comes
 * back as a `function_call_output` whose text is "Wall time: ...\nOutput:\n<structuredContent JSON>".
 *
 * In every mode: without `default_tools_approval_mode = "approve"` in the generated config, codex
 * refuses the call itself in acceptEdits and ask ("MCP tool call requires approval, but approval
 * policy is never": `codex exec` cannot ask a human); with it the calls reach the server, which
 * bounds them by the agent's token (see docs/MCP.md).
 */

const NS = "mcp__switchyard";
const SIGNAL_RE = /(\/[^\s"`\\]+)\/\.switchyard\/output\/signal\.json/;

let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld();
});
afterAll(async () => {
  w.fake.setHandler(undefined);
  await w?.stop();
});

type NamespaceTool = { type: string; name?: string; tools?: Array<{ name?: string }> };

/** The names inside the `mcp__switchyard` namespace tool codex sent. */
function switchyardToolNames(req: RecordedRequest): string[] {
  const ns = (req.body.tools as NamespaceTool[] | undefined)?.find((t) => t.type === "namespace" && t.name === NS);
  return (ns?.tools ?? []).map((t) => t.name ?? "");
}

function workspaceOf(req: RecordedRequest): string {
  const m = SIGNAL_RE.exec(JSON.stringify(req.body));
  if (!m) throw new Error("the prompt names no signal.json path");
  return m[1]!;
}

const call = (name: string, input: unknown, text: string): FakeReplyInput => ({ kind: "turn", text, toolCalls: [{ namespace: NS, name, input }] });

/** Write signal.json with a shell command (codex's own tool), the message passed through a quoted heredoc. */
function signalDone(req: RecordedRequest, message: string): FakeReplyInput {
  const file = join(workspaceOf(req), ".switchyard", "output", "signal.json");
  const cmd = `cat > '${file}' <<'EOF'\n${JSON.stringify({ status: "done", result: { message } })}\nEOF`;
  return { kind: "turn", text: "Reporting.", toolCalls: [{ name: "exec_command", input: { cmd } }] };
}

describe("real Codex with the switchyard MCP server it gets at spawn", () => {
  for (const permissionMode of ["bypass", "acceptEdits", "ask"] as const) {
    it(`${permissionMode}: spawns a helper through the switchyard namespace's spawn_agent, waits for it, and gets its result back`, async () => {
      const childPrompt = fakeAgentPrompt("helper", [{ done: "the helper's answer is 42" }]);
      let turn = 0;
      let childId = "";
      let offered: string[] = [];
      w.fake.setHandler((req) => {
        if (req.api !== "responses" || !req.script.offeredTools.includes(NS)) return undefined;
        turn++;
        if (turn === 1) {
          offered = switchyardToolNames(req);
          return call("spawn_agent", { provider: "fake", prompt: childPrompt }, "Spawning a helper.");
        }
        if (turn === 2) {
          childId = /agent_[0-9a-f-]{36}/.exec(req.script.toolResult ?? "")?.[0] ?? "";
          return call("wait_for_agent", { agentId: childId, timeoutSeconds: 40 }, "Waiting for it.");
        }
        if (turn === 3) return signalDone(req, /42/.test(req.script.toolResult ?? "") ? "the helper said 42" : `no answer: ${(req.script.toolResult ?? "").slice(0, 200)}`);
        return "Done.";
      });
      const parent = await w.t.client.agents.spawn.mutate({ provider: "codex", repo: w.repo, prompt: `Get a helper to answer. REAL_CODEX_MCP_${permissionMode}`, permissionMode, model: "fake-model" });
      const done = await waitForAgent(w.t.client, parent.id, ["idle", "crashed", "waiting_for_input"], 90_000);
      if (done.result !== "the helper said 42") {
        const raw = await w.t.client.agents.output.query({ agentId: parent.id, fromLine: 0, limit: 100, format: "raw" });
        throw new Error(`${done.status} ${done.statusReason} ${done.result}\n${raw.lines.map((l) => l.raw?.slice(0, 600)).join("\n")}`);
      }
      expect(offered).toEqual(expect.arrayContaining(["spawn_agent", "wait_for_agent", "list_agents", "ask"]));
      expect(offered).not.toContain("approve"); // only on an agent's own /mcp/agents/<id>; codex is on the shared /mcp
      expect(done.status, done.statusReason ?? "").toBe("idle");
      expect(done.sessionNumber).toBe(1); // signal.json written: no resume to ask for it
      const child = await w.t.client.agents.get.query({ agentId: childId });
      expect(child).toMatchObject({ parentAgentId: parent.id, status: "idle", result: "the helper's answer is 42", repoPath: parent.repoPath });
      // codex's own events show the calls as MCP tool calls to the switchyard server
      const raw = (await w.t.client.agents.output.query({ agentId: parent.id, fromLine: 0, limit: 200, format: "raw" })).lines.map((l) => l.raw ?? "");
      const mcpCalls = raw.filter((l) => l.includes('"type":"item.completed"') && l.includes('"mcp_tool_call"')).map((l) => JSON.parse(l).item as { server: string; tool: string; status: string; error: unknown });
      expect(mcpCalls.map((c) => [c.server, c.tool, c.status, c.error])).toEqual([["switchyard", "spawn_agent", "completed", null], ["switchyard", "wait_for_agent", "completed", null]]);
      expect(await w.t.client.agents.approvals.query({ agentId: parent.id })).toEqual([]);
      // the token is read from the environment, never written into codex's config
      const config = readFileSync(join(w.t.home, "agents", parent.id, "config", "config.toml"), "utf8");
      expect(config).toContain("[mcp_servers.switchyard]");
      expect(config).toContain('bearer_token_env_var = "SWITCHYARD_TOKEN"');
      expect(config).not.toMatch(/bearer_token\s*=/);
    }, 120_000);
  }
});
