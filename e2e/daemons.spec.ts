import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test } from "./fixtures/server";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

test("spawn a daemon from the form, trigger it, watch the queue drain and its turns, stop and resume it", async ({ page }) => {
  await page.goto("/daemons");
  await expect(page.getByRole("heading", { name: "No daemons yet" })).toBeVisible();
  await page.getByRole("button", { name: "Spawn a daemon" }).click();
  const form = page.getByTestId("spawn-daemon-form");
  await form.getByRole("button", { name: "Spawn daemon" }).click();
  await expect(form.getByRole("alert")).toHaveText(/task/);
  await form.getByLabel("Name").fill("echo-bot");
  await form.getByLabel("Task").fill("Echo every message.");
  await form.getByRole("button", { name: "Spawn daemon" }).click();
  await expect(page).toHaveURL(/\/daemons\/daemon_/);
  await expect(page.getByTestId("daemon-status")).toHaveAttribute("data-status", "running");

  const payload = page.getByLabel("Trigger payload");
  await payload.fill("{not json");
  await page.getByRole("button", { name: "Send trigger" }).click();
  await expect(page.getByRole("alert")).toContainText("Not valid JSON");
  for (const msg of ["first message", '{"n": 2}', "third message"]) {
    await payload.fill(msg);
    await page.getByRole("button", { name: "Send trigger" }).click();
    await expect(payload).toHaveValue("");
  }
  const turns = page.locator('[data-testid="daemon-event"][data-type="daemon.turn_completed"]');
  await expect(turns.filter({ hasText: "third message" })).toHaveCount(1, { timeout: 20_000 });
  await expect(turns.filter({ hasText: "first message" })).toHaveCount(1);
  await expect(page.getByTestId("daemon-queue-depth")).toHaveText(/^0 queued/);
  await page.screenshot({ path: join(ARTIFACTS, "daemon-page.png"), fullPage: true });

  await page.getByRole("button", { name: "Stop" }).click();
  await expect(page.getByTestId("daemon-status")).toHaveAttribute("data-status", "stopped", { timeout: 10_000 });
  await expect(page.getByRole("button", { name: "Send trigger" })).toBeDisabled();
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(page.getByTestId("daemon-status")).toHaveAttribute("data-status", "running", { timeout: 10_000 });
  await page.goto("/daemons");
  await expect(page.getByTestId("daemon-row")).toHaveCount(1);
  await expect(page.getByTestId("daemon-row")).toContainText("echo-bot");
  await page.screenshot({ path: join(ARTIFACTS, "daemons-list.png") });
});
