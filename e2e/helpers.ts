import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "@playwright/test";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Put a `system.noted` event on the bus through the API (tRPC mutation, not batched). */
export async function emit(request: APIRequestContext, message: string, scope?: Record<string, string>): Promise<number> {
  const res = await request.post("/trpc/events.emit", { data: scope ? { message, scope } : { message } });
  expect(res.status(), await res.text()).toBe(200);
  const body = (await res.json()) as { result: { data: { id: number } } };
  return body.result.data.id;
}

/** GET a tRPC query with its input (non-batched). */
async function query<T>(request: APIRequestContext, path: string, input: unknown): Promise<T> {
  const res = await request.get(`/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

/** How many events the store holds. */
export async function storedCount(request: APIRequestContext): Promise<number> {
  return (await query<{ count: number }>(request, "events.count", { afterId: 0 })).count;
}

/** The ids of every stored event, oldest first. */
export async function storedIds(request: APIRequestContext): Promise<number[]> {
  const { events } = await query<{ events: Array<{ id: number }> }>(request, "events.list", { afterId: 0, limit: 5000 });
  return events.map((e) => e.id);
}

/** The data-event-id of every rendered row, in page order. */
export function renderedIds(page: Page): Promise<number[]> {
  return page.getByTestId("event-row").evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-event-id"))));
}

/** The feed row whose summary is exactly this message. */
export function rowWithMessage(page: Page, message: string) {
  return page.getByTestId("event-row").filter({ has: page.getByTestId("event-summary").getByText(message, { exact: true }) });
}

export function rowsOfType(page: Page, type: string) {
  return page.locator(`[data-testid="event-row"][data-event-type="${type}"]`);
}

/** Mark the window, to check later that the page was not reloaded. */
export async function markWindow(page: Page): Promise<void> {
  await page.evaluate(() => Object.assign(window, { __e2eMark: true }));
}

export async function windowIsMarked(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __e2eMark?: boolean }).__e2eMark === true);
}

/** Call a tRPC mutation (non-batched) and return its data. */
export async function mutate<T>(request: APIRequestContext, path: string, input: unknown): Promise<T> {
  const res = await request.post(`/trpc/${path}`, { data: input });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

/** Prepare and start a run through the API (as a script would); returns its id. */
export async function startRun(request: APIRequestContext, opts: { strategyPath: string; cwd: string; input?: string }): Promise<string> {
  const { runId } = await mutate<{ runId: string }>(request, "runs.prepare", { strategyPath: opts.strategyPath, cwd: opts.cwd });
  await mutate(request, "runs.start", { runId, input: opts.input ?? "" });
  return runId;
}

/**
 * The token an agent of this server carries (its SWITCHYARD_TOKEN), made from the data dir's
 * `agent-secret` the way the server makes it (`sya.<agentId>.<HMAC>`): requests with it act as that agent.
 */
export function agentTokenOf(home: string, agentId: string): string {
  const secret = Buffer.from(readFileSync(join(home, "agent-secret"), "utf8").trim(), "base64url");
  return `sya.${agentId}.${createHmac("sha256", secret).update(`agent:${agentId}`).digest("base64url")}`;
}
