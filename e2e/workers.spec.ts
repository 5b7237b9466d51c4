import type { Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { makeRepo } from "./fixtures/repo";
import { expect, test } from "./fixtures/server";
import { mutate } from "./helpers";

const ROOT = resolve(import.meta.dirname, "..");
const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

const script = (steps: unknown) => `Leave a note.\n\n\`\`\`fake-agent\n${JSON.stringify(steps)}\n\`\`\`\n`;

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
  await page.emulateMedia({ colorScheme: null });
}

/** `yard worker` as on another machine: its own data dir, none of the server's settings; resolves once it said hello. */
async function startWorker(server: string, token: string, name: string, home: string): Promise<{ proc: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(SWITCHYARD_|ANTHROPIC_|OPENAI_)/.test(key)) env[key] = value;
  const proc = spawn(process.execPath, [join(ROOT, "bin", "yard.mjs"), "worker", "--server", server, "--token", token, "--home", home, "--capacity", "2", "--labels", "e2e"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`worker ${name} did not connect:\n${out}`)), 60_000);
    proc.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes(`as ${name} (epoch`)) {
        clearTimeout(timer);
        res();
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`worker ${name} exited with ${code}:\n${out}`));
    });
  });
  return { proc, output: () => out };
}

test("workers page: add a worker from the page (its token once), see it connect with its CLIs, an agent run on it, drain it, and see it disconnected then lost after kill -9", async ({ page, request, yard }) => {
  test.setTimeout(240_000);
  const repo = makeRepo();
  const home = mkdtempSync(join(tmpdir(), "switchyard-e2e-worker-"));
  let worker: ChildProcess | undefined;
  try {
    const origin = new URL(yard.url).origin;
    await page.goto("/workers");
    await expect(page.getByRole("heading", { level: 1, name: "Workers" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workers" })).toHaveAttribute("aria-current", "page");
    const empty = page.getByTestId("empty-state");
    await expect(empty.getByRole("heading", { name: "No workers: agents run on this server" })).toBeVisible();
    await expect(empty).toContainText("yard worker token create --name build-2");
    await expect(empty).toContainText(`yard worker --server ${origin} --token TOKEN`);
    await screenshotBothThemes(page, "workers-empty");
    // the spawn form offers no placement while no worker is registered
    await page.goto("/agents/new");
    await expect(page.getByTestId("spawn-agent-form").getByLabel("Task")).toBeVisible();
    await expect(page.getByTestId("spawn-where")).toHaveCount(0);

    // add one from the page: its token, once, with the line to run on it
    await page.goto("/workers");
    await page.getByRole("button", { name: "Add a worker" }).click();
    const add = page.getByTestId("add-worker");
    await add.getByLabel("Name").fill("Build 2");
    await add.getByRole("button", { name: "Create token" }).click();
    await expect(add.getByRole("alert")).toContainText("a worker name");
    await add.getByLabel("Name").fill("build-2");
    await add.getByRole("button", { name: "Create token" }).click();
    const once = page.getByTestId("worker-token-once");
    const token = (await once.getByTestId("worker-token").textContent())!.trim();
    expect(token).toMatch(/^syw\.build-2\./);
    await expect(once.getByTestId("worker-command")).toHaveText(`yard worker --server ${origin} --token ${token}`);
    await expect(once.getByRole("button", { name: "Copy the command" })).toBeVisible();
    const row = page.locator('[data-testid="worker-row"][data-worker="build-2"]');
    await expect(row.getByTestId("worker-state")).toHaveText("Never connected");
    await expect(row.getByTestId("worker-heartbeat")).toHaveText("never");
    await page.screenshot({ path: join(ARTIFACTS, "workers-token-once.png"), animations: "disabled" });
    await once.getByRole("button", { name: "Done" }).click();
    await expect(once).toHaveCount(0);
    await page.reload();
    await expect(row).toHaveCount(1);
    await expect(page.getByText(token)).toHaveCount(0);

    // a real `yard worker` with that token: the row turns connected on its worker.connected event
    const started = await startWorker(origin, token, "build-2", home);
    worker = started.proc;
    await expect(row).toHaveAttribute("data-state", "connected", { timeout: 20_000 });
    await expect(row.getByTestId("worker-state")).toHaveText("Connected");
    await expect(row.getByTestId("worker-hostname")).toHaveText(hostname());
    await expect(row.getByTestId("worker-clis")).toContainText("fake");
    await expect(row.getByTestId("worker-labels")).toHaveText("e2e");
    await expect(row.getByTestId("worker-agents")).toHaveText("0 / 2");
    await expect(row.getByTestId("worker-heartbeat")).toHaveText(/^(just now|\ds ago)$/);
    await expect(row).toContainText(new URL(origin).host);
    await screenshotBothThemes(page, "workers-connected");

    // an agent placed on it from the spawn form: Where lists it by name
    await page.goto("/agents/new");
    const form = page.getByTestId("spawn-agent-form");
    const where = form.getByLabel("Where");
    await expect(where.locator("option")).toHaveText(["Any worker (default)", "This server (local)", "build-2"]);
    await where.selectOption("build-2");
    await form.getByLabel("Provider").selectOption("fake");
    await form.getByLabel("Git repository").fill(repo);
    await form.getByLabel("Task").fill(script([{ text: "Writing on the worker" }, { write: { path: "note.md", content: "from build-2\n" } }, { done: "Note left" }]));
    await form.getByRole("button", { name: "Start agent" }).click();
    await expect(page).toHaveURL(/\/agents\/agent_/);
    await expect(page.getByTestId("agent-worker")).toHaveText("on worker build-2");
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 60_000 });
    await expect(page.getByTestId("agent-result")).toContainText("Note left");
    await expect(page.getByTestId("agent-log")).toContainText("Writing on the worker");
    await page.screenshot({ path: join(ARTIFACTS, "agent-on-worker.png"), fullPage: true, animations: "disabled" });
    await page.getByTestId("agent-worker").getByRole("link", { name: "build-2" }).click();
    await expect(page).toHaveURL(/\/workers$/);

    // the list names each agent's host: the worker, or local; every cell still on one line at 1440 px
    const local = await mutate<{ id: string; worker: string | null }>(request, "agents.spawn", { provider: "fake", repo, worker: "local", alias: "stays-home", prompt: script([{ done: "ok" }]) });
    expect(local.worker).toBeNull();
    await page.goto("/agents");
    await expect(page.getByTestId("agent-row")).toHaveCount(2);
    await expect(page.getByTestId("agent-row").filter({ hasText: "stays-home" }).getByTestId("agent-host")).toHaveText("local");
    await expect(page.getByTestId("agent-row").filter({ hasNotText: "stays-home" }).getByTestId("agent-host")).toHaveText("build-2");
    expect(await page.getByTestId("agents-table").evaluate((t) => t.scrollWidth <= t.parentElement!.clientWidth)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "agents-list-hosts.png"), animations: "disabled" });

    // an agent still working when the worker dies (it sleeps less than the test's own wait, so it ends by itself)
    const sleeper = await mutate<{ id: string }>(request, "agents.spawn", { provider: "fake", repo, worker: "build-2", alias: "sleeper", prompt: script([{ text: "working" }, { sleep: 45_000 }, { done: "late" }]) });
    await page.goto(`/agents/${sleeper.id}`);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "running", { timeout: 30_000 });

    // drain: shown beside its state; undrain brings it back
    await page.goto("/workers");
    await row.getByRole("button", { name: "Drain" }).click();
    await expect(row.getByTestId("worker-drained")).toBeVisible();
    await expect(row.getByRole("button", { name: "Undrain" })).toBeVisible();
    await expect(row.getByTestId("worker-state")).toHaveText("Connected");

    // kill -9: disconnected at once (its connection closed), lost once silent for the lost delay
    worker.kill("SIGKILL");
    await expect(row).toHaveAttribute("data-state", "disconnected", { timeout: 10_000 });
    await expect(row.getByTestId("worker-state")).toHaveText("Disconnected");
    await expect(row).toHaveAttribute("data-state", "lost", { timeout: 25_000 });
    await expect(row.getByTestId("worker-state")).toHaveText("Lost");
    await expect(row.getByTestId("worker-drained")).toBeVisible();
    await page.screenshot({ path: join(ARTIFACTS, "workers-lost.png"), animations: "disabled" });

    // its running agent is interrupted, and the Inbox says so: resume elsewhere, or stop it
    await page.goto("/inbox");
    const item = page.locator('[data-testid="inbox-item"][data-kind="agent_interrupted"]');
    await expect(item).toHaveCount(1);
    await expect(item).toContainText("sleeper");
    await expect(item).toContainText("was interrupted on worker build-2");
    await expect(item).toContainText("worker build-2 lost");
    await expect(item.getByRole("button", { name: "Resume on another worker" })).toBeVisible();
    await screenshotBothThemes(page, "inbox-interrupted");
    await item.getByRole("button", { name: "Stop it" }).click();
    await expect(item).toHaveCount(0);
    await page.goto("/workers");

    // revoke, confirmed first: a dismissed confirmation changes nothing
    page.once("dialog", (d) => void d.dismiss());
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect(row).toHaveAttribute("data-state", "lost");
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect(row).toHaveAttribute("data-state", "revoked");
    await expect(row.getByRole("button", { name: "New token" })).toBeVisible();
  } finally {
    if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  }
});
