/**
 * The strategy stream's limit: the hops of a one-agent run without Switchyard. On the Comma
 * WebSocket (`/ws`, the frames a client needs: prepare_run -> run_prepared, start_run ->
 * agent_streaming... strategy_completed) it streams the model's answer with the AI SDK's
 * `streamText` from the same fake model, joins consecutive text deltas as the wire does (one
 * event per 16 ms or 8,192 characters), commits each event as a row of the same events table in
 * the same group commit (bare-db.ts) and sends its frame once committed. Args: home, model URL
 * (the fake's root), deltas. Prints `{"url": ...}`.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { streamText } from "ai";
import { createServer } from "node:http";
import { join } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { BareEventLog, openBareDb } from "./bare-db";

const [home, modelRoot, deltasArg] = process.argv.slice(2);
const log = new BareEventLog(openBareDb(join(home!, "bare-stream.db")));
const model = createAnthropic({ baseURL: `${modelRoot}/v1`, apiKey: "bench" })("claude-bench");
const WINDOW_MS = 16;
const MAX_CHARS = 8192;
let runs = 0;

function send(socket: WebSocket, frame: Record<string, unknown>): void {
  socket.send(JSON.stringify({ ...frame, ts: new Date().toISOString() }));
}

async function run(socket: WebSocket, runId: string, input: string, requestId: string | undefined): Promise<void> {
  const meta = { agentName: "talker", model: "anthropic/claude-bench" };
  const emit = (type: string, payload: Record<string, unknown>, frame: Record<string, unknown> | null) =>
    new Promise<void>((done) =>
      log.append(type, payload, { runId }, () => {
        if (frame) send(socket, frame);
        done();
      }),
    );
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const event = { type: "text", text: pending };
    pending = "";
    void emit("run.agent_streamed", { ...meta, stepKey: "f.0", event }, { type: "agent_streaming", runId, ...meta, event });
  };
  const result = streamText({ model, system: `LONG[${deltasArg}]`, prompt: input, maxOutputTokens: 64_000 });
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type !== "text-delta" || !part.text) continue;
    text += part.text;
    pending += part.text;
    if (pending.length >= MAX_CHARS) flush();
    else timer ??= setTimeout(flush, WINDOW_MS);
  }
  flush();
  await emit("run.completed", { status: "completed", result: text }, { type: "strategy_completed", runId, result: text, usage: { promptTokens: 0, completionTokens: 0 }, ...(requestId ? { requestId } : {}) });
}

const http = createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server: http, path: "/ws" });
wss.on("connection", (socket) => {
  socket.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { type: string; requestId?: string; runId?: string; input?: string };
    if (msg.type === "prepare_run") {
      send(socket, { type: "run_prepared", runId: `run_bare_${++runs}`, requestId: msg.requestId });
    } else if (msg.type === "start_run") {
      void run(socket, msg.runId!, msg.input ?? "", msg.requestId).catch((err: unknown) =>
        send(socket, { type: "strategy_error", runId: msg.runId, error: { code: "EXECUTION_ERROR", message: String(err) } }),
      );
    }
  });
});
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
process.on("SIGTERM", () => process.exit(0));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(http.address() as { port: number }).port}` })}\n`);
