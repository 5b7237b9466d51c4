import type { Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test as base } from "./fixtures/server";
import { NESTED_STRATEGY, Workspace } from "./fixtures/workspace";
import { mutate, startRun } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

/** Every test gets a run directory with a strategies/ folder, removed afterwards. */
const test = base.extend<{ ws: Workspace }>({
  // eslint-disable-next-line no-empty-pattern -- Playwright reads fixture deps from the pattern
  ws: async ({}, use) => {
    const ws = new Workspace();
    await use(ws);
    ws.dispose();
  },
});

const node = (page: Page, agent: string) => page.locator(`[data-testid="flow-node"][data-agent="${agent}"]`);
const stream = (page: Page, agent: string) => page.locator(`[data-testid="agent-stream"][data-agent="${agent}"]`);
const runStatus = (page: Page) => page.getByTestId("run-summary").getByTestId("run-status");

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

test("launch a strategy from the form and watch its graph, passes and streams live", async ({ page, ws }) => {
  ws.strategy("nested", NESTED_STRATEGY);
  await page.goto("/runs/new");
  await expect(page.getByRole("heading", { level: 1, name: "New run" })).toBeVisible();

  // Validation before anything is sent.
  await page.getByRole("button", { name: "Start run" }).click();
  await expect(page.getByText("Choose a strategy to run.")).toBeVisible();

  await page.getByLabel("Working directory", { exact: true }).fill(ws.cwd);
  const radio = page.getByRole("radio", { name: "Nested Review" });
  await page.getByTestId("strategy-option").filter({ has: radio }).click();
  await expect(radio).toBeChecked();
  await expect(page.getByText("Choose a strategy to run.")).toHaveCount(0);
  const preview = page.getByTestId("strategy-preview");
  await expect(preview).toContainText("Two reviewers in parallel, twice");
  await expect(preview.getByTestId("flow-node")).toHaveCount(3);
  await expect(preview.getByTestId("flow-edge")).toHaveCount(6);
  await expect(page.getByLabel("Model", { exact: true }).locator("option", { hasText: "mock/echo" })).toHaveCount(1);
  await page.getByLabel("Input", { exact: true }).fill("Review the picnic plan");
  await screenshotBothThemes(page, "runs-launch");
  await page.getByRole("button", { name: "Start run" }).click();

  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { level: 1, name: "Nested Review" })).toBeVisible();
  const graph = page.getByTestId("flow-graph");
  // cycle > broadcast > (alpha, beta) + observer judge: 3 agents; fanout x2, fanin x2, observe, loop.
  await expect(graph.getByTestId("flow-node")).toHaveCount(3);
  await expect(graph.getByTestId("flow-edge")).toHaveCount(6);
  await expect(graph.locator('[data-testid="flow-edge"][data-kind="loop"]')).toHaveCount(1);
  await expect(graph.locator('[data-testid="flow-node"][data-node-id="flow.observer"]')).toHaveAttribute("data-agent", "judge");

  // Pass 1: alpha runs while its text streams in (before the run completes).
  await expect(node(page, "alpha")).toHaveAttribute("data-status", "running");
  await expect(graph.getByTestId("cycle-pass")).toHaveAttribute("data-pass", "1");
  await expect(stream(page, "alpha").getByTestId("stream-text").first()).toContainText("Alpha");
  await expect(stream(page, "alpha").locator("strong").first()).toHaveText("Alpha");
  await expect(page.getByTestId("run-page")).toHaveAttribute("data-status", "running");
  await expect(runStatus(page)).toHaveAttribute("data-status", "running");
  await expect(node(page, "beta")).toHaveAttribute("data-status", "completed");

  // Pass 2, then the observer, then done.
  await expect(graph.getByTestId("cycle-pass")).toHaveAttribute("data-pass", "2", { timeout: 15_000 });
  await expect(runStatus(page)).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
  for (const agent of ["alpha", "beta", "judge"]) await expect(node(page, agent)).toHaveAttribute("data-status", "completed");
  await expect(stream(page, "alpha").getByTestId("agent-call")).toHaveCount(2);
  await expect(stream(page, "judge").getByTestId("agent-call")).toHaveCount(2);
  await expect(stream(page, "alpha")).toContainText("so you can watch it.");
  await expect(page.getByTestId("segment")).toHaveCount(1);
  await expect(page.getByTestId("segment-input")).toHaveText("Review the picnic plan");
  // no break signal after the last pass: the cycle's output is the observer's verdict, as in the reference
  await expect(page.getByTestId("segment-result")).toContainText("Keep going: one more pass.");
  await expect(page.getByTestId("run-tokens")).not.toHaveText(/^0/);

  // A click on a node shows that agent's stream only.
  await node(page, "beta").click();
  await expect(page.getByTestId("agent-stream")).toHaveCount(1);
  await expect(stream(page, "beta")).toBeVisible();
  await node(page, "beta").click();
  await expect(page.getByTestId("agent-stream")).toHaveCount(3);

  await screenshotBothThemes(page, "runs-run-page");
});

test("answer a permission request from the page, then continue the run", async ({ page, request, ws }) => {
  const secret = ws.outsideFile("secret.txt", "outside text from the e2e test");
  const path = ws.strategy(
    "reader",
    `name: Reader\nversion: "1.0"\nagents:\n  reader:\n    model: mock/demo\n    tools: [read_file]\n    systemPrompt: 'USE_TOOL[read_file]{"path":"${secret}"}'\nflow: {type: sequential, steps: [{agent: reader}]}\n`,
  );
  const runId = await startRun(request, { strategyPath: path, cwd: ws.cwd, input: "Read the secret" });
  await page.goto(`/runs/${runId}`);

  const ask = page.getByTestId("permission-request");
  await expect(ask).toBeVisible();
  await expect(ask).toContainText("reader wants to read");
  await expect(ask).toContainText(secret);
  await expect(node(page, "reader")).toHaveAttribute("data-status", "waiting");
  await expect(runStatus(page)).toHaveAttribute("data-status", "waiting");
  await page.screenshot({ path: join(ARTIFACTS, "runs-run-permission.png"), animations: "disabled" });
  await ask.getByRole("button", { name: "Allow", exact: true }).click();

  await expect(ask).toHaveCount(0);
  await expect(runStatus(page)).toHaveAttribute("data-status", "completed");
  await expect(node(page, "reader")).toHaveAttribute("data-status", "completed");
  const tool = stream(page, "reader").getByTestId("tool-call").first();
  await expect(tool).toContainText("read_file");
  await expect(tool).toContainText("Completed");
  await tool.getByRole("button").click();
  await expect(tool).toContainText("outside text from the e2e test");
  await expect(stream(page, "reader").getByTestId("request-note").first()).toContainText("allow (human)");
  await expect(stream(page, "reader")).toContainText("Tool finished");

  // Continue: a second segment with a new input; this time the request is denied.
  const form = page.getByTestId("continue-form");
  await form.getByRole("textbox").fill("Once more, please");
  await form.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByTestId("segment")).toHaveCount(2);
  await expect(page.locator('[data-testid="segment"][data-segment="2"]')).toContainText("Once more, please");
  await expect(page.getByTestId("run-segment")).toHaveText(/^2/);
  await page.getByTestId("permission-request").getByRole("button", { name: "Deny", exact: true }).click();
  await expect(runStatus(page)).toHaveAttribute("data-status", "completed");
  await expect(page.locator('[data-testid="segment"][data-segment="2"]')).toHaveAttribute("data-status", "completed");
  await expect(stream(page, "reader").getByTestId("agent-call")).toHaveCount(2);
  await expect(stream(page, "reader").getByTestId("request-note").nth(1)).toContainText("deny (human)");
});

test("stop a run mid-stream: it ends cancelled, and the list says so", async ({ page, request, ws }) => {
  const path = ws.strategy("talker", `name: Talker\nversion: "1.0"\nagents:\n  talker: {model: mock/demo, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  const runId = await startRun(request, { strategyPath: path, cwd: ws.cwd, input: "talk" });
  await page.goto(`/runs/${runId}`);
  await expect(stream(page, "talker").getByTestId("stream-text")).toContainText("t20 ");
  await expect(node(page, "talker")).toHaveAttribute("data-status", "running");
  // Steering is queued for the next agent call (this one is already talking).
  const steer = page.getByTestId("steer-form");
  await steer.getByRole("button", { name: "Steer" }).click();
  await expect(steer).toContainText("Write something first.");
  await steer.getByRole("textbox").fill("Be brief");
  await steer.getByRole("button", { name: "Steer" }).click();
  await expect(page.getByTestId("segment")).toContainText("“Be brief” queued for the next agent call");
  await page.getByTestId("stop-run").click();

  await expect(runStatus(page)).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByTestId("segment-error")).toContainText("CANCELLED");
  await expect(stream(page, "talker").getByTestId("call-error")).toContainText("Stopped");
  await expect(node(page, "talker")).toHaveAttribute("data-status", "error");
  await expect(page.getByTestId("stop-run")).toHaveCount(0);
  await expect(page.getByTestId("continue-form")).toBeVisible();

  await page.getByRole("main").getByRole("link", { name: "Runs", exact: true }).click();
  const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
  await expect(row.getByTestId("run-status")).toHaveAttribute("data-status", "cancelled");
});

test("a reload mid-run shows everything so far, once, and keeps streaming", async ({ page, request, ws }) => {
  const path = ws.strategy("slow", `name: Slow\nversion: "1.0"\nagents:\n  slow: {model: mock/demo, systemPrompt: "LONG[400] DELAY[25]"}\nflow: {type: sequential, steps: [{agent: slow}]}\n`);
  const runId = await startRun(request, { strategyPath: path, cwd: ws.cwd, input: "go" });
  await page.goto(`/runs/${runId}`);
  const text = stream(page, "slow").getByTestId("stream-text");
  await expect(text).toContainText("t40 ");
  await page.reload();
  await expect(text).toContainText("t0 t1 t2 ");
  await expect(text).toContainText("t60 ");
  await expect(runStatus(page)).toHaveAttribute("data-status", "running");
  await expect(runStatus(page)).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
  const full = (await text.textContent()) ?? "";
  const expected = Array.from({ length: 400 }, (_, i) => `t${i}`).join(" ");
  expect(full.replace(/\s+/g, " ").trim()).toBe(expected);
  await expect(stream(page, "slow").getByTestId("agent-call")).toHaveCount(1);
});

test("the runs list: empty state, live rows, filters (screenshots)", async ({ page, request, ws }) => {
  await page.goto("/runs");
  await expect(page.getByTestId("empty-state")).toContainText("No runs yet");
  await expect(page.getByTestId("empty-state").getByRole("link", { name: "New run" })).toHaveAttribute("href", "/runs/new");

  const quick = ws.strategy("quick", `name: Quick Answer\nversion: "1.0"\nagents:\n  a: {model: mock/demo, systemPrompt: "SAY[Done quickly.]"}\nflow: {type: sequential, steps: [{agent: a}]}\n`);
  const slow = ws.strategy("slow", `name: Slow Writer\nversion: "1.0"\nagents:\n  w: {model: mock/demo, systemPrompt: "LONG[100000] DELAY[20]"}\nflow: {type: sequential, steps: [{agent: w}]}\n`);
  const first = await startRun(request, { strategyPath: quick, cwd: ws.cwd, input: "one" });
  const second = await startRun(request, { strategyPath: slow, cwd: ws.cwd, input: "two" });

  // Rows appear and change status live, without a reload.
  const rows = page.getByTestId("run-row");
  await expect(rows).toHaveCount(2);
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${first}"] [data-testid="run-status"]`)).toHaveAttribute("data-status", "completed");
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${second}"] [data-testid="run-status"]`)).toHaveAttribute("data-status", "running");

  await page.getByRole("group", { name: "Filter by status" }).getByRole("button", { name: /Running/ }).click();
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("Slow Writer");
  await page.getByRole("group", { name: "Filter by status" }).getByRole("button", { name: /All/ }).click();
  await page.getByRole("searchbox").fill("quick");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("Quick Answer");
  await page.getByRole("searchbox").fill("no such strategy");
  await expect(page.getByTestId("runs-no-match")).toBeVisible();
  await page.getByRole("button", { name: "Clear filters" }).click();
  await expect(rows).toHaveCount(2);
  await screenshotBothThemes(page, "runs-list");

  await rows.filter({ hasText: "Quick Answer" }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${first}$`));
  await expect(page.getByRole("heading", { level: 1, name: "Quick Answer" })).toBeVisible();
  await mutate(request, "runs.stop", { runId: second });
});

test("the bundled demo: its result is the writer's last draft, not the editor's note; the graph's labels are whole", async ({ page, ws }) => {
  await page.goto("/runs/new");
  await page.getByLabel("Working directory", { exact: true }).fill(ws.cwd);
  const radio = page.getByRole("radio", { name: "Switchyard Demo" });
  await page.getByTestId("strategy-option").filter({ has: radio }).click();
  await page.getByLabel("Input", { exact: true }).fill("Plan a team offsite");
  await page.getByRole("button", { name: "Start run" }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(runStatus(page)).toHaveAttribute("data-status", "completed", { timeout: 30_000 });

  // writer, editor "Not yet", writer revises, editor approves: the cycle ends with the revision
  await expect(stream(page, "writer").getByTestId("agent-call")).toHaveCount(2);
  const result = page.getByTestId("segment-result");
  await expect(result).not.toBeEmpty();
  const text = (await result.innerText()).trim();
  expect(text).not.toMatch(/^Not yet/);
  expect(text).not.toContain("==DONE==");
  const lastDraft = (await stream(page, "writer").getByTestId("agent-call").last().getByTestId("stream-text").innerText()).trim();
  expect(text).toBe(lastDraft);

  // node labels fit their boxes: "Completed · observer", not "observer · comple…"
  const labels = await page.getByTestId("flow-graph").locator("text").allTextContents();
  expect(labels.filter((l) => l.includes("…"))).toEqual([]);
  await expect(node(page, "editor")).toContainText("Completed · observer");
  await screenshotBothThemes(page, "runs-demo");
});
