import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonMessage, type DaemonMessageType } from "../../shared/comma";
import { CommaClient, type Frame } from "../testing/comma-client";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

/**
 * Every frame a full scenario sends on /ws, on every connection, parses with the wire schemas of
 * shared/comma.ts (strict: no field of our own), and the scenario reaches every message type we
 * send. The reference client parses the same frames with its own (looser) schemas.
 */

const MODEL = "anthropic/claude-sonnet-4-5";
/** Answered with an `error` frame by Switchyard (see comma-connection.ts), so never sent. */
const NEVER_SENT: DaemonMessageType[] = ["provider_registered", "provider_unregistered", "credential_set", "trash_restore_result"];

let fake: FakeModelServer;
let t: TestServer;
let cwd: string;
let outside: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k" } });
  cwd = tempHome("switchyard-frames-cwd-");
  outside = tempHome("switchyard-frames-outside-");
  writeFileSync(join(outside, "secret.txt"), "outside text");
  mkdirSync(join(t.home, "archive", "old-agent-1700000000000"), { recursive: true });
  writeFileSync(join(t.home, "archive", "old-agent-1700000000000", "file.txt"), "archived");
});

afterAll(async () => {
  await t.stop();
  await fake.close();
  for (const d of [t.home, cwd, outside]) removeHome(d);
});

const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");

describe("every frame on /ws has its schema", () => {
  it("a full scenario: runs, requests, continuation, palette, errors", async () => {
    const strategyPath = join(cwd, "everything.yaml");
    writeFileSync(
      strategyPath,
      [
        "name: Everything",
        'version: "1.0"',
        "agents:",
        "  human: {type: user}",
        `  asker: {model: ${MODEL}, tools: [ask_question], systemPrompt: 'USE_TOOL[ask_question]{"question":"Which colour?"}'}`,
        `  reader: {model: ${MODEL}, tools: [read_file], systemPrompt: 'USE_TOOL[read_file]{"path":"${join(outside, "secret.txt")}"}'}`,
        `  runner: {model: ${MODEL}, tools: [run_command], systemPrompt: 'USE_TOOL[run_command]{"command":"echo ran"}'}`,
        `  x: {model: ${MODEL}, systemPrompt: "SAY[x says.] DELAY[20]"}`,
        `  y: {model: ${MODEL}, systemPrompt: "SAY[y says.]"}`,
        `  judge: {model: ${MODEL}, systemPrompt: "SAY[done]"}`,
        "flow:",
        "  type: sequential",
        "  steps:",
        "    - agent: human",
        "    - agent: asker",
        "    - agent: reader",
        "    - agent: runner",
        "    - {name: Both, type: broadcast, steps: [{agent: x}, {agent: y}]}",
        "    - {type: cycle, cycles: 2, observer: judge, steps: [{agent: x}]}",
      ].join("\n"),
    );
    const a = await CommaClient.connect(t.url);
    const b = await CommaClient.connect(t.url);
    try {
      for (const msg of [
        { type: "ping" },
        { type: "list_runs" },
        { type: "list_strategies" },
        { type: "get_available_models" },
        { type: "list_providers" },
        { type: "list_mcp_servers" },
        { type: "update_mcp_server", serverId: "s", enabled: true, scope: "default" },
        { type: "register_provider", providerId: "p" },
        { type: "set_credential", providerId: "p", credentialType: "api", apiKey: "k" },
        { type: "trash_list" },
        { type: "trash_restore", cwd, trashPath: "/nowhere" },
        { type: "trash_clear" },
        { type: "hub_list" },
        { type: "hub_install", name: "pkg" },
        { type: "hub_remove", name: "pkg" },
        { type: "start_run", runId: "nope" },
      ]) {
        await a.request(msg);
      }
      a.send("{not json");
      await a.waitFor((f) => f.type === "error" && f.code === "PARSE_ERROR");

      const prepared = await a.request({ type: "prepare_run", strategyPath, cwd });
      const runId = prepared.runId as string;
      b.send({ type: "subscribe", runId });
      a.send({ type: "update_policy", runId, tool: "run_command", mode: "write", deny: ["git push*"] });
      await a.waitFor((f) => f.type === "policy_updated" && f.runId === runId);
      a.send({ type: "start_run", runId, input: "", requestId: "start-1" });
      await a.waitFor((f) => f.type === "request_input" && f.runId === runId);
      a.send({ type: "steer_run", runId, text: "Be brief." });
      await a.waitFor((f) => f.type === "steer_queued" && f.runId === runId);
      a.send({ type: "user_input", runId, agentName: "human", text: "Hello" });
      const question = await a.waitFor((f) => f.type === "request_question" && f.runId === runId);
      a.send({ type: "question_response", runId, questionRequestId: question.requestId, response: "Blue" });
      const permission = await a.waitFor((f) => f.type === "request_permission" && f.runId === runId);
      a.send({ type: "permission_decision", runId, permissionRequestId: permission.requestId, decision: "allow-session" });
      expect(await a.waitFor(ended(runId), 20_000)).toMatchObject({ type: "strategy_completed" });

      const again = await b.request({ type: "prepare_run", runId });
      expect((again.conversation as { records: unknown[] }).records.length).toBeGreaterThan(5);
      b.send({ type: "continue_run", runId, input: "" });
      // continued without input, the user agent asks again; stop the continuation there
      await b.waitFor((f) => f.type === "request_input" && f.runId === runId && b.frames.indexOf(f) > b.frames.indexOf(again));
      b.send({ type: "stop_run", runId });
      expect(await b.waitFor((f) => f.type === "strategy_error" && f.runId === runId)).toMatchObject({ error: { code: "CANCELLED", message: "Run cancelled by client" } });
      await new Promise((r) => setTimeout(r, 200));

      const seen = new Set<string>();
      for (const c of [a, b]) {
        for (const frame of c.frames) {
          const parsed = DaemonMessage.safeParse(frame);
          expect(parsed.error?.issues, `${frame.type}: ${JSON.stringify(frame).slice(0, 300)}`).toBeUndefined();
          seen.add(frame.type);
        }
      }
      const all = DaemonMessage.options.map((o) => o.shape.type.value);
      expect(all.filter((type) => !seen.has(type) && !NEVER_SENT.includes(type))).toEqual([]);
      // the palette's trash is the archive of agent worktrees
      const trash = a.frames.find((f) => f.type === "trash_list_result")!;
      expect(trash).toMatchObject({ totalEntries: 1, totalBytes: 8, workspaces: [{ cwd: join(t.home, "archive"), entries: [{ metadata: { originalPath: join(t.home, "worktrees", "old-agent") } }] }] });
      expect(a.frames.find((f) => f.type === "trash_clear_result")).toMatchObject({ cleared: 1, bytesFreed: 8 });
      expect(a.frames.find((f) => f.type === "hub_packages")).toMatchObject({ operation: "list", available: [], installed: [] });
    } finally {
      a.close();
      b.close();
    }
  });
});
