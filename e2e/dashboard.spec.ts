import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test } from "./fixtures/server";
import { emit, markWindow, rowsOfType, rowWithMessage, windowIsMarked } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

const SECTIONS = [
  { path: "/runs", name: "runs", nav: "Runs", heading: "Runs", empty: "No runs yet" },
  { path: "/agents", name: "agents", nav: "Agents", heading: "Agents", empty: "No agents yet" },
  { path: "/daemons", name: "daemons", nav: "Daemons", heading: "Daemons", empty: "No daemons yet" },
  { path: "/inbox", name: "inbox", nav: "Inbox", heading: "Inbox", empty: "Nothing needs you" },
] as const;

test("the overview shows the navigation, a live connection and the server.started event", async ({ page }) => {
  await page.goto("/");
  const nav = page.getByRole("navigation", { name: "Main" });
  for (const label of ["Overview", "Runs", "Agents", "Daemons", "Inbox"]) await expect(nav.getByRole("link", { name: label })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisible();
  await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("connection-state")).toHaveText("Live");
  await expect(page.getByTestId("server-version")).toHaveText(/^v\d+\.\d+\.\d+/);

  const started = rowsOfType(page, "server.started");
  await expect(started).toHaveCount(1);
  await expect(started).toContainText(/listening on 127\.0\.0\.1:\d+/);
  await started.getByRole("button").click();
  await expect(started.getByRole("button")).toHaveAttribute("aria-expanded", "true");
  await expect(started.locator("pre")).toContainText('"type": "server.started"');
});

test("the home page in dark and light themes (screenshots)", async ({ page }) => {
  for (const scheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto("/");
    await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
    await expect(rowsOfType(page, "server.started")).toBeVisible();
    await expect(page.getByTestId("server-status")).toContainText(/up \d/);
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/\bdark\b/);
    else await expect(page.locator("html")).not.toHaveClass(/\bdark\b/);
    await page.screenshot({ path: join(ARTIFACTS, `home-${scheme}.png`), fullPage: true });
  }
});

test("the theme toggle overrides the system theme and is remembered", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/");
  await expect(page.locator("html")).not.toHaveClass(/\bdark\b/);
  await page.getByRole("button", { name: "Dark theme" }).click();
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await page.reload();
  await expect(page.locator("html")).toHaveClass(/\bdark\b/);
  await expect(page.getByRole("button", { name: "Dark theme" })).toHaveAttribute("aria-pressed", "true");
  await page.getByRole("button", { name: "System theme" }).click();
  await expect(page.locator("html")).not.toHaveClass(/\bdark\b/);
});

test("feed rows show scope badges and expand to the full JSON (screenshot)", async ({ page, request }) => {
  await page.goto("/");
  await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
  await emit(request, "planner picked strategy fan-out", { runId: "r_7f3a" });
  await emit(request, "claude-code wrote src/index.ts", { runId: "r_7f3a", agentId: "a_12" });
  await emit(request, "nightly triage woke up", { daemonId: "triage" });
  await emit(request, "A long note. ".repeat(40).trim());

  const row = rowWithMessage(page, "claude-code wrote src/index.ts");
  await expect(row).toContainText("run r_7f3a");
  await expect(row).toContainText("agent a_12");
  await expect(rowWithMessage(page, "nightly triage woke up")).toContainText("daemon triage");
  await row.getByRole("button").focus();
  await page.keyboard.press("Enter");
  await expect(row.locator("pre")).toContainText('"agentId": "a_12"');
  await page.screenshot({ path: join(ARTIFACTS, "home-feed.png"), fullPage: true });
  await page.keyboard.press("Enter");
  await expect(row.locator("pre")).toHaveCount(0);
});

for (const section of SECTIONS) {
  test(`${section.path} renders the ${section.heading} page (screenshot)`, async ({ page }) => {
    await page.goto(section.path);
    await expect(page.getByRole("heading", { level: 1, name: section.heading })).toBeVisible();
    await expect(page.getByTestId("empty-state")).toContainText(section.empty);
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: section.nav })).toHaveAttribute("aria-current", "page");
    await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
    await expect(page).toHaveTitle(`${section.heading} · Switchyard`);
    await page.screenshot({ path: join(ARTIFACTS, `${section.name}.png`), fullPage: true });
  });
}

test("pages for something new have a proper tab title", async ({ page }) => {
  await page.goto("/daemons/new");
  await expect(page).toHaveTitle("New daemon · Switchyard");
  await page.goto("/runs/new");
  await expect(page).toHaveTitle("New run · Switchyard");
  await page.goto("/agents/new");
  await expect(page).toHaveTitle("New agent · Switchyard");
  await page.goto("/accounts/new");
  await expect(page).toHaveTitle("New account · Switchyard");
});

test("a deep link to /runs/some-id renders the run page", async ({ page }) => {
  await page.goto("/runs/some-id");
  await expect(page.getByRole("heading", { level: 1, name: "Run some-id" })).toBeVisible();
  await expect(page.getByTestId("empty-state")).toContainText("some-id");
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" })).toHaveAttribute("aria-current", "page");
  await page.screenshot({ path: join(ARTIFACTS, "run-detail.png"), fullPage: true });
  await page.getByRole("main").getByRole("link", { name: "Runs" }).click();
  await expect(page).toHaveURL(/\/runs$/);
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
});

test("the navigation switches pages without a reload, with mouse, keyboard and back button", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
  await markWindow(page);
  const nav = page.getByRole("navigation", { name: "Main" });

  await nav.getByRole("link", { name: "Agents" }).click();
  await expect(page).toHaveURL(/\/agents$/);
  await expect(page.getByRole("heading", { level: 1, name: "Agents" })).toBeVisible();

  await nav.getByRole("link", { name: "Inbox" }).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/inbox$/);
  await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();

  await page.goBack();
  await expect(page.getByRole("heading", { level: 1, name: "Agents" })).toBeVisible();
  await nav.getByRole("link", { name: "Overview" }).click();
  await expect(rowsOfType(page, "server.started")).toHaveCount(1);
  expect(await windowIsMarked(page)).toBe(true);
  await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live");
});

test("an unknown path is a 404 from the server; a browser gets the app's own not-found page, client routes get the app", async ({ page, request }) => {
  const missing = await request.get("/nope");
  expect(missing.status()).toBe(404);
  expect(await missing.text()).toBe("Not Found");
  for (const path of ["/", "/runs", "/runs/some-id", "/agents", "/agents/new", "/daemons", "/inbox", "/accounts/new"]) {
    const res = await request.get(path);
    expect(res.status(), path).toBe(200);
    expect(res.headers()["content-type"], path).toContain("text/html");
    expect(await res.text(), path).toContain('<div id="root">');
  }

  for (const path of ["/nope", "/runsx/1", "/inbox/anything", "/accounts/acct_1"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(path === "/nope" || path === "/runsx/1" ? 404 : 200);
    await expect(page.getByTestId("not-found")).toHaveAttribute("data-kind", "page");
    await expect(page.getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
    await expect(page).toHaveTitle("Not found · Switchyard");
  }
  await page.screenshot({ path: join(ARTIFACTS, "not-found.png"), fullPage: true });
  await page.getByRole("link", { name: "Go to the overview" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisible();
});

test("an unknown run, agent or daemon: one friendly not-found page each, at once (a NOT_FOUND is not retried)", async ({ page }) => {
  const calls: string[] = [];
  page.on("request", (req) => {
    const match = /\/trpc\/([\w.,]+)/.exec(req.url());
    if (match) calls.push(...match[1]!.split(","));
  });
  const entities = [
    { path: "/runs/no-such-run", kind: "run", heading: "Run no-such-run", list: "/runs", get: "runs.get" },
    { path: "/agents/no-such-agent", kind: "agent", heading: "Agent no-such-agent", list: "/agents", get: "agents.get" },
    { path: "/daemons/no-such-daemon", kind: "daemon", heading: "Daemon no-such-daemon", list: "/daemons", get: "daemons.snapshot" },
  ];
  for (const e of entities) {
    calls.length = 0;
    await page.goto(e.path);
    // retries would take ~6 s (1 s, then 2 s back-off, twice): the page says it well before
    const notFound = page.getByTestId("not-found");
    await expect(notFound).toHaveAttribute("data-kind", e.kind, { timeout: 2500 });
    await expect(page.getByRole("heading", { level: 1, name: e.heading })).toBeVisible();
    await expect(notFound.getByTestId("empty-state")).toContainText(`This ${e.kind} is not here`);
    await expect(page.getByTestId("query-error")).toHaveCount(0);
    await expect(page.locator("body")).not.toContainText("_NOT_FOUND");
    expect(calls.filter((c) => c === e.get), e.path).toHaveLength(1);
    await page.screenshot({ path: join(ARTIFACTS, `not-found-${e.kind}.png`), fullPage: true });
    await notFound.getByRole("link", { name: `Open the ${e.kind} list` }).click();
    await expect(page).toHaveURL(new RegExp(`${e.list}$`));
  }
});
