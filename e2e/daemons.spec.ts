import type { Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test } from "./fixtures/server";
import { mutate } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

/** mock/echo streams 6 characters every 10 ms: a payload this long keeps a turn busy for ~2.5 s. */
const long = (label: string, words = 125) => `${label}: ${"lorem ipsum ".repeat(words)}`.trim();

/** The whole page in both themes; the viewport grows to the page so the sticky sidebar spans it. */
async function screenshotBothThemes(page: Page, name: string) {
  const viewport = page.viewportSize();
  for (const scheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/\bdark\b/);
    else await expect(page.locator("html")).not.toHaveClass(/\bdark\b/);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    if (viewport) await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${scheme}.png`), animations: "disabled" });
    if (viewport) await page.setViewportSize(viewport);
  }
}

/** [seq, state] of every queue row, top to bottom. */
const queueRows = (page: Page) =>
  page.getByTestId("daemon-queue-item").evaluateAll((rows) => rows.map((r) => [Number(r.getAttribute("data-seq")), r.getAttribute("data-state")] as const));

/** Counts calls of `daemons.trigger` leaving the page. */
function countTriggerCalls(page: Page): () => number {
  let calls = 0;
  page.on("request", (req) => {
    if (req.url().includes("daemons.trigger")) calls++;
  });
  return () => calls;
}

const status = (page: Page) => page.getByTestId("daemon-facts").getByTestId("daemon-status");

test("spawn a daemon from the form, trigger it three times, watch the queue drain and the turns, stop and resume it", async ({ page, yard }) => {
  // a long walk through the page (about 20 s alone; CI runs two workers on two cores)
  test.setTimeout(120_000);
  const triggerCalls = countTriggerCalls(page);
  await page.goto("/daemons");
  await expect(page.getByRole("heading", { name: "No daemons yet" })).toBeVisible();
  await page.getByRole("link", { name: "Spawn a daemon" }).click();
  await expect(page).toHaveURL(/\/daemons\/new$/);
  const form = page.getByTestId("spawn-daemon-form");
  await expect(form.getByLabel("Model")).toHaveValue("mock/echo");

  // Checked before sending: no task, a bad capacity.
  await form.getByLabel("Queue capacity").fill("0");
  await form.getByRole("button", { name: "Spawn daemon" }).click();
  await expect(page.locator("#daemon-task-error")).toContainText("Give the daemon a task");
  await expect(page.locator("#daemon-capacity-error")).toContainText("A whole number from 1");
  await expect(form.getByLabel("Task")).toBeFocused();
  await expect(page).toHaveURL(/\/daemons\/new$/);

  // Refused by the server: a root directory outside the allowed roots, shown beside the form and on the field.
  await form.getByLabel("Name").fill("echo-bot");
  await form.getByLabel("Task").fill("Echo every message.");
  await form.getByLabel("Queue capacity").fill("16");
  await form.getByLabel("Root directory").fill("/proc/not-allowed-here");
  await form.getByRole("button", { name: "Spawn daemon" }).click();
  await expect(page.getByTestId("spawn-error")).toContainText("DAEMON_PATH_NOT_ALLOWED");
  await expect(page.getByTestId("spawn-error")).toContainText("outside the allowed roots");
  await expect(page.locator("#daemon-persistPath-error")).toContainText("Outside the directories this server may use");
  await screenshotBothThemes(page, "daemons-spawn");
  await form.getByLabel("Root directory").fill("");
  await form.getByRole("button", { name: "Spawn daemon" }).click();

  await expect(page).toHaveURL(/\/daemons\/daemon_[0-9a-f-]{36}$/);
  const echoId = new URL(page.url()).pathname.split("/").pop()!;
  await expect(page.getByRole("heading", { level: 1, name: "echo-bot" })).toBeVisible();
  await expect(status(page)).toHaveAttribute("data-status", "running");
  // The first turn answers the task.
  await expect(page.getByTestId("daemon-turn").first()).toContainText("Echo every message.");
  await expect(page.getByTestId("daemon-event").filter({ hasText: "spawned" }).first()).toBeVisible();

  // A malformed JSON payload is refused inline and nothing is sent.
  const payload = page.getByLabel("Trigger payload");
  await payload.fill("{not json");
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.locator("#trigger-payload-error")).toContainText("Not valid JSON");
  await expect(payload).toHaveAttribute("aria-invalid", "true");
  await expect(payload).toBeFocused();
  expect(triggerCalls()).toBe(0);
  await expect(page.locator('[data-testid="daemon-event"][data-type="daemon.triggered"]')).toHaveCount(0);

  // Three triggers (two texts and a JSON object), sent while the first is still being answered
  // (mock/echo streams it for about 8 s: long enough for a slow machine to send the other two).
  const sent = [long("first", 400), `{"n": 2, "note": "${"json ".repeat(200).trim()}"}`, long("third")];
  for (const [i, text] of sent.entries()) {
    await payload.fill(text);
    await page.getByRole("button", { name: "Send trigger" }).click();
    await expect(page.getByTestId("trigger-sent")).toHaveText(`Queued as #${i}`);
    await expect(payload).toHaveValue("");
  }
  expect(triggerCalls()).toBe(3);
  // The queue, FIFO: the one in flight first, then the pending ones in order.
  await expect.poll(() => queueRows(page), { timeout: 5000 }).toEqual([[0, "inflight"], [1, "pending"], [2, "pending"]]);
  await expect(page.getByTestId("daemon-queue-depth")).toHaveText(/^3 queued of 16$/);
  await expect(page.getByTestId("daemon-queue-item").nth(1)).toContainText('{"n":2,"note":"json json');
  await expect.poll(() => queueRows(page), { timeout: 20_000 }).toEqual([[1, "inflight"], [2, "pending"]]);

  // It drains; each trigger gets its turn, in order.
  await expect(page.getByTestId("daemon-queue-depth")).toHaveText(/^0 queued/, { timeout: 30_000 });
  await expect(page.getByTestId("daemon-queue")).toContainText("Empty");
  const turns = page.getByTestId("daemon-turn");
  await expect(turns).toHaveCount(4);
  expect(await turns.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-seq")))).toEqual([null, "0", "1", "2"]);
  await expect(turns.nth(1).getByTestId("daemon-turn-text")).toContainText("first: lorem ipsum");
  await expect(turns.nth(2).getByTestId("daemon-turn-text")).toContainText('"n":2');
  await expect(turns.nth(3).getByTestId("daemon-turn-text")).toContainText("third: lorem ipsum");
  await expect(page.locator('[data-testid="daemon-event"][data-type="daemon.triggered"]')).toHaveCount(3);
  const ids = await page.getByTestId("daemon-event").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-event-id"))));
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort((a, b) => a - b)).toEqual(ids);

  // The snapshot JSON is collapsed until asked for.
  const snapshot = page.getByTestId("daemon-snapshot");
  await expect(snapshot.locator("pre")).toBeHidden();
  await snapshot.locator("summary").click();
  await expect(snapshot.locator("pre")).toContainText('"total_iterations": 4');
  await screenshotBothThemes(page, "daemon-page");

  // Stop: stopped, and a trigger is refused in words.
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(status(page)).toHaveAttribute("data-status", "stopped");
  await expect(page.getByTestId("daemon-facts").getByTestId("daemon-loop")).toHaveText("Stopped");
  await payload.fill("are you there?");
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByTestId("trigger-error")).toHaveAttribute("data-code", "DAEMON_NOT_RUNNING");
  await expect(page.getByTestId("trigger-error")).toContainText("The daemon is stopped: resume it");

  // Resume: running again, and the trigger goes through.
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(status(page)).toHaveAttribute("data-status", "running");
  await expect(page.getByTestId("daemon-event").filter({ hasText: "resumed" })).toHaveCount(1);
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByTestId("trigger-error")).toHaveCount(0);
  await expect(page.getByTestId("daemon-turn-text").filter({ hasText: "are you there?" })).toHaveCount(1);

  // A second daemon, stopped, so the list shows both kinds.
  const other = await mutate<{ id: string }>(page.request, "daemons.spawn", { name: "nightly-digest", task: "Digest", model: "mock/echo", wakeIntervalMs: 60_000 });
  await mutate(page.request, "daemons.stop", { id: other.id });
  await page.getByRole("link", { name: "Daemons", exact: true }).first().click();
  await expect(page).toHaveURL(/\/daemons$/);
  const rows = page.getByTestId("daemon-row");
  await expect(rows).toHaveCount(2);
  const echo = rows.filter({ hasText: "echo-bot" });
  await expect(echo.getByTestId("daemon-status")).toHaveAttribute("data-status", "running");
  await expect(echo).toContainText("mock/echo");
  await expect(echo.getByTestId("daemon-queue-count")).toHaveText("0 / 16");
  await expect(echo.getByTestId("daemon-root")).toHaveAttribute("title", join(yard.home, "daemons", echoId));
  await expect(echo.getByTestId("daemon-root")).toHaveText(`${join(yard.home, "daemons", echoId.slice(0, 15))}…`);
  await expect(rows.filter({ hasText: "nightly-digest" }).getByTestId("daemon-status")).toHaveAttribute("data-status", "stopped");
  await screenshotBothThemes(page, "daemons-list");
});

test("queue full and root already in use are shown readably; delete asks first", async ({ page, yard }) => {
  const root = join(yard.home, "daemons", "shared-root");
  const busy = await mutate<{ id: string }>(page.request, "daemons.spawn", { name: "tiny-queue", task: "Hi", model: "mock/echo", eventQueueCapacity: 1, persistPath: root });

  // Another daemon on the same root is refused by the server, next to the form.
  await page.goto("/daemons/new");
  const form = page.getByTestId("spawn-daemon-form");
  await form.getByLabel("Task").fill("Echo");
  await form.getByLabel("Root directory").fill(root);
  await form.getByRole("button", { name: "Spawn daemon" }).click();
  await expect(page.getByTestId("spawn-error")).toContainText("DAEMON_ALREADY_RUNNING");
  await expect(page.locator("#daemon-persistPath-error")).toContainText("Another daemon is running on this directory");

  // Capacity 1: while one event is in flight, the next is refused.
  await page.goto(`/daemons/${busy.id}`);
  await expect(page.getByTestId("daemon-turn")).toHaveCount(1);
  const payload = page.getByLabel("Trigger payload");
  await payload.fill(long("slow one"));
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByTestId("trigger-sent")).toHaveText("Queued as #0");
  await payload.fill('["one", "too", "many"]');
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByTestId("trigger-error")).toHaveAttribute("data-code", "DAEMON_QUEUE_FULL");
  await expect(page.getByTestId("trigger-error")).toContainText("The queue is full (capacity 1)");
  await expect(payload).toHaveValue('["one", "too", "many"]');
  await expect(page.getByTestId("daemon-queue-depth")).toHaveText(/^0 queued of 1$/, { timeout: 15_000 });

  // A server restart: the daemon comes back by itself; the page's event stream resumes after the
  // last id it had, so nothing is shown twice and the new events arrive.
  const before = await page.getByTestId("daemon-event").count();
  await yard.restart();
  await expect(page.getByTestId("daemon-event").filter({ hasText: "resumed" })).toHaveCount(1, { timeout: 30_000 });
  const ids = await page.getByTestId("daemon-event").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-event-id"))));
  expect(ids.length).toBeGreaterThan(before);
  expect(new Set(ids).size).toBe(ids.length);
  await expect(page.locator('[data-testid="daemon-event"][data-type="daemon.spawned"]')).toHaveCount(1);
  await expect(page.getByTestId("daemon-facts").getByTestId("daemon-status")).toHaveAttribute("data-status", "running");

  // Delete asks for confirmation; Cancel keeps it.
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("alertdialog", { name: "Delete tiny-queue?" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await dialog.getByRole("button", { name: "Delete daemon" }).click();
  await expect(page).toHaveURL(/\/daemons$/);
  await expect(page.getByRole("heading", { name: "No daemons yet" })).toBeVisible();
});

test("/daemons/<name> is the daemon's page: triggers from it land, and its turns follow live", async ({ page, request }) => {
  const d = await mutate<{ id: string }>(request, "daemons.spawn", { task: "Echo every message.", name: "named-echo", model: "mock/echo" });
  await page.goto("/daemons/named-echo");
  await expect(page.getByRole("heading", { level: 1, name: "named-echo" })).toBeVisible();
  await expect(page.getByTestId("daemon-facts")).toBeVisible();
  await expect(page.getByText(`${d.id} · mock/echo`)).toBeVisible();
  await expect(status(page)).toHaveAttribute("data-status", "running");
  await page.getByLabel("Trigger payload").fill("hello by name");
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByTestId("trigger-sent")).toHaveText("Queued as #0");
  // a bad payload next: its error alone, not the last send's "Queued as #0" beside it
  await page.getByLabel("Trigger payload").fill('{"oops": ');
  await expect(page.getByTestId("trigger-sent")).toHaveCount(0);
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.locator("#trigger-payload-error")).toContainText("Not valid JSON");
  await expect(page.getByTestId("trigger-sent")).toHaveCount(0);
  await page.getByLabel("Trigger payload").fill("");
  await expect(page.locator('[data-testid="daemon-event"][data-type="daemon.triggered"]')).toHaveCount(1);
  await expect(page.getByTestId("daemon-turn").filter({ hasText: "hello by name" })).toHaveCount(1, { timeout: 20_000 });
  await page.screenshot({ path: join(ARTIFACTS, "daemon-by-name.png"), fullPage: true });
});
