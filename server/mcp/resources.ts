import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { AgentStreamEvent } from "../../shared/agents";
import { clip, errorInfo, preview, type ToolContext } from "./tool-kit";

/**
 * Read-only resources: a run's timeline and an agent's log, each a page a client can attach
 * (Claude Code's @-mentions) and read on. Where there is a session (stdio, a stateful HTTP
 * session) a client may subscribe to them: subscriptions.ts.
 * - `switchyard://runs/{runId}/timeline` (`?after=<id>`): up to 500 events after event id `after` (the
 *   streamed text deltas left out), each `{id, ts, type, payload}` with payloads cut to 2,000
 *   characters of JSON; `nextAfter` reads on.
 * - `switchyard://agents/{agentId}/log` (`?from=<line>`): 200 lines of its output from line `from` (default:
 *   the last 200), one event a line of text.
 */

const TIMELINE_PAGE = 500;
const LOG_PAGE = 200;

export function registerResources(server: McpServer, ctx: ToolContext): void {
  const timeline = { title: "A run's timeline", description: "The events of a strategy run, oldest first, 500 a page (streamed text deltas left out); ?after=<nextAfter> reads on.", mimeType: "application/json" };
  const listRuns = async () => ({
    resources: (await unlessForbidden(async () => (await ctx.yard.runs.list.query({ limit: 20 })).items, [])).map((r) => ({ uri: `switchyard://runs/${r.runId}/timeline`, name: `Run ${r.strategyName} ${r.runId.slice(0, 8)} (${r.status})`, mimeType: "application/json" })),
  });
  // the SDK's templates match a {?query} only when it is there: the first page and the next ones are two templates
  server.registerResource("run-timeline", new ResourceTemplate("switchyard://runs/{runId}/timeline", { list: listRuns }), timeline, (uri, vars) => read(() => readTimeline(ctx, uri, one(vars.runId), "")));
  server.registerResource("run-timeline-page", new ResourceTemplate("switchyard://runs/{runId}/timeline{?after}", { list: undefined }), timeline, (uri, vars) =>
    read(() => readTimeline(ctx, uri, one(vars.runId), one(vars.after))),
  );

  const log = { title: "An agent's log", description: "A coding agent's output, one event a line, 200 lines a page (the last ones, or ?from=<line>).", mimeType: "text/plain" };
  const listAgents = async () => ({
    resources: (await ctx.yard.agents.list.query({ limit: 20 })).items.map((a) => ({ uri: `switchyard://agents/${a.id}/log`, name: `Agent ${a.alias} (${a.provider}, ${a.status})`, mimeType: "text/plain" })),
  });
  server.registerResource("agent-log", new ResourceTemplate("switchyard://agents/{agentId}/log", { list: listAgents }), log, (uri, vars) => read(() => readLog(ctx, uri, one(vars.agentId), "")));
  server.registerResource("agent-log-page", new ResourceTemplate("switchyard://agents/{agentId}/log{?from}", { list: undefined }), log, (uri, vars) => read(() => readLog(ctx, uri, one(vars.agentId), one(vars.from))));
}

async function readTimeline(ctx: ToolContext, uri: URL, runId: string, afterParam: string) {
  let after = Number(afterParam || 0);
  const events: unknown[] = [];
  // read pages until 500 events that are not text deltas (or the end)
  for (let pages = 0; events.length < TIMELINE_PAGE && pages < 20; pages++) {
    const page = await ctx.yard.runs.timeline.query({ runId, afterId: after, limit: 2000 });
    for (const e of page.events) {
      after = e.id;
      if (e.type !== "run.agent_streamed") events.push({ id: e.id, ts: e.ts, type: e.type, payload: preview(e.payload, 2000) });
      if (events.length >= TIMELINE_PAGE) break;
    }
    if (page.events.length < 2000) break;
  }
  return { uri: uri.href, mimeType: "application/json", text: JSON.stringify({ runId, events, nextAfter: after }) };
}

async function readLog(ctx: ToolContext, uri: URL, agentId: string, from: string) {
  const out = await ctx.yard.agents.output.query({ agentId, limit: LOG_PAGE, format: "events", maxFieldBytes: 2000, ...(from ? { fromLine: Number(from) } : {}) });
  const end = out.fromLine + out.lines.length;
  const head = `# agent ${out.agentId}: lines ${out.fromLine}-${end} of ${out.totalLines}${end < out.totalLines ? ` (next: ?from=${end})` : ""}`;
  const body = out.lines.flatMap((l) => l.events.map((e) => `${l.line} ${eventLine(e)}`));
  return { uri: uri.href, mimeType: "text/plain", text: [head, ...body].join("\n") };
}

function eventLine(e: AgentStreamEvent): string {
  switch (e.kind) {
    case "text":
    case "thinking":
    case "raw":
      return `${e.kind}: ${e.text}`;
    case "tool_call":
      return `tool_call ${e.name} ${clip(JSON.stringify(e.input ?? {}), 300)}`;
    case "tool_result":
      return `tool_result ${e.name ?? e.id}${e.isError ? " (error)" : ""}: ${clip(e.output, 500)}`;
    case "result":
      return `result${e.isError ? " (error)" : ""}: ${e.message}`;
    case "error":
    case "rate_limit":
      return `${e.kind}: ${e.message}`;
    case "system":
      return `${e.subtype}: ${e.message}`;
    case "usage":
      return `usage: ${e.usage.inputTokens} in, ${e.usage.outputTokens} out`;
    case "session":
      return `session ${e.sessionId}`;
  }
}

const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));

/** A read whose failure names its code (as the tools' errors do). */
async function read(fn: () => Promise<{ uri: string; mimeType: string; text: string }>) {
  try {
    return { contents: [await fn()] };
  } catch (err) {
    throw resourceError(err);
  }
}

/** A resource request's failure as a protocol error whose message starts with the code ("AGENT_FORBIDDEN: ..."). */
export function resourceError(err: unknown): McpError {
  const info = errorInfo(err);
  return new McpError(ErrorCode.InvalidParams, `${info.code}: ${info.message}`);
}

/** An agent's token may not list runs: its resource list holds its own agents only. */
async function unlessForbidden<T>(fn: () => Promise<T>, otherwise: T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (errorInfo(err).code === "AGENT_FORBIDDEN") return otherwise;
    throw err;
  }
}
