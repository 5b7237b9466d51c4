import type { APIRequestContext, Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test } from "./fixtures/server";
import { emit, markWindow, renderedIds, rowsOfType, rowWithMessage, storedCount, storedIds, windowIsMarked } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

/** Every stored event is rendered once: the ids on the page are unique and are exactly the store's. */
async function expectFeedMatchesStore(page: Page, request: APIRequestContext) {
  const count = await storedCount(request);
  await expect.poll(async () => (await renderedIds(page)).length, { message: "rendered rows = stored events" }).toBe(count);
  const ids = await renderedIds(page);
  expect(new Set(ids).size, "no event is rendered twice").toBe(ids.length);
  expect([...ids].sort((a, b) => a - b)).toEqual(await storedIds(request));
  expect(ids, "newest first").toEqual([...ids].sort((a, b) => b - a));
}

test("events appear live, and a crash and restart of the server loses and repeats none", async ({ page, request, yard }) => {
  test.setTimeout(120_000);
  const tag = Date.now().toString(36);
  await page.goto("/");
  const state = page.getByTestId("connection-state");
  await expect(state).toHaveAttribute("data-state", "live");
  await expect(rowsOfType(page, "server.started")).toHaveCount(1);
  await markWindow(page);

  // Live, without a reload.
  const live = Array.from({ length: 5 }, (_, i) => `live ${i + 1} ${tag}`);
  for (const message of live) await emit(request, message);
  for (const message of live) await expect(rowWithMessage(page, message)).toHaveCount(1);

  // The server crashes: the page notices.
  await yard.kill();
  await expect(state).toHaveAttribute("data-state", "reconnecting");
  await expect(state).toHaveText("Reconnecting…");
  await page.screenshot({ path: join(ARTIFACTS, "home-reconnecting.png") });

  // Back on the same port and home; events are emitted before the page has reconnected.
  await yard.start();
  const whileAway = Array.from({ length: 10 }, (_, i) => `while away ${i + 1} ${tag}`);
  for (const message of whileAway) await emit(request, message);
  await expect(state).toHaveAttribute("data-state", "live", { timeout: 30_000 });
  for (const message of whileAway) await expect(rowWithMessage(page, message)).toHaveCount(1);
  await expect(rowsOfType(page, "server.started")).toHaveCount(2);

  // Live again, also for a burst.
  const after = Array.from({ length: 40 }, (_, i) => `after ${i + 1} ${tag}`);
  await Promise.all(after.map((message) => emit(request, message)));
  for (const message of [after[0]!, after.at(-1)!]) await expect(rowWithMessage(page, message)).toHaveCount(1);

  await expectFeedMatchesStore(page, request);
  expect(await windowIsMarked(page), "the page was never reloaded").toBe(true);
});

test("a graceful restart shows server.shutdown_started, then catches up", async ({ page, request, yard }) => {
  test.setTimeout(90_000);
  await page.goto("/");
  const state = page.getByTestId("connection-state");
  await expect(state).toHaveAttribute("data-state", "live");
  await markWindow(page);

  await yard.stop("SIGTERM");
  await expect(state).toHaveAttribute("data-state", "reconnecting");
  await yard.start();
  await emit(request, "after a graceful restart");
  await expect(state).toHaveAttribute("data-state", "live", { timeout: 30_000 });
  await expect(rowsOfType(page, "server.shutdown_started")).toHaveCount(1);
  await expect(rowsOfType(page, "server.shutdown_started")).toContainText("SIGTERM");
  await expect(rowWithMessage(page, "after a graceful restart")).toHaveCount(1);
  await expectFeedMatchesStore(page, request);
  expect(await windowIsMarked(page)).toBe(true);
});

test("on first load the feed shows the latest 100 stored events, then live ones", async ({ page, request }) => {
  for (let batch = 0; batch < 6; batch++) {
    await Promise.all(Array.from({ length: 25 }, (_, i) => emit(request, `backlog ${batch * 25 + i + 1}`)));
  }
  const stored = await storedIds(request);
  expect(stored.length).toBe(151);

  await page.goto("/");
  await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
  await expect.poll(async () => (await renderedIds(page)).length).toBe(100);
  expect(await renderedIds(page)).toEqual(stored.slice(-100).reverse());

  const id = await emit(request, "one more");
  await expect(rowWithMessage(page, "one more")).toHaveAttribute("data-event-id", String(id));
  await expect(page.getByTestId("event-row")).toHaveCount(101);
  await expect(page.getByTestId("event-row").first()).toHaveAttribute("data-event-id", String(id));
});

test("when the stream gets an HTTP error it shows Offline, then recovers by itself with no gap and no repeat", async ({ page, request, yard }) => {
  test.setTimeout(90_000);
  let failures = 0;
  let failNext = 0;
  await page.route("**/trpc/events.onEvent**", async (route) => {
    if (failNext > 0) {
      failNext--;
      failures++;
      return route.fulfill({ status: 503, contentType: "text/plain", body: "proxy says no" });
    }
    return route.continue();
  });
  await page.goto("/");
  const state = page.getByTestId("connection-state");
  await expect(state).toHaveAttribute("data-state", "live");
  for (let i = 1; i <= 5; i++) await emit(request, `before ${i}`);
  await expect(rowWithMessage(page, "before 5")).toHaveCount(1);

  // The next two attempts to reach the stream fail with 503 (the EventSource gives up on those).
  failNext = 2;
  await yard.kill();
  await expect(state).toHaveAttribute("data-state", "offline", { timeout: 20_000 });
  await yard.start();
  for (let i = 1; i <= 5; i++) await emit(request, `after ${i}`);
  await expect(state).toHaveAttribute("data-state", "live", { timeout: 30_000 });
  expect(failures).toBe(2);
  await expect(rowWithMessage(page, "after 5")).toHaveCount(1);
  await expectFeedMatchesStore(page, request);
});
