import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeRepo } from "./fixtures/repo";
import { expect, test } from "./fixtures/server";
import { mutate } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

test("an agent page survives a kill -9 of the server: it reconnects and shows every line once, in order", async ({ page, request, yard }) => {
  test.setTimeout(120_000);
  const repo = makeRepo("switchyard-e2e-restart-");
  try {
    const steps = [{ lines: { count: 300, perSecond: 60, stamp: true } }, { done: "all lines written" }];
    const agent = await mutate<{ id: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: `Write lines.\n\n\`\`\`fake-agent\n${JSON.stringify(steps)}\n\`\`\`\n` });
    await page.goto(`/agents/${agent.id}`);
    const lines = page.getByTestId("agent-log-line");
    await expect.poll(() => lines.count(), { timeout: 20_000 }).toBeGreaterThan(20);

    await yard.stop("SIGKILL");
    await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "reconnecting");
    await yard.start();
    await expect(page.getByTestId("connection-state")).toHaveAttribute("data-state", "live", { timeout: 30_000 });
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 60_000 });

    // cleanup at idle may still add its note: compare the page with the store until both settle
    const storedLines = async () => ((await (await request.get(`/trpc/agents.get?input=${encodeURIComponent(JSON.stringify({ agentId: agent.id }))}`)).json()) as { result: { data: { lineCount: number } } }).result.data.lineCount;
    await expect.poll(async () => (await lines.count()) - (await storedLines()), { timeout: 20_000 }).toBe(0);
    const lineCount = await storedLines();
    expect(lineCount).toBeGreaterThanOrEqual(302);
    expect(await lines.count()).toBe(lineCount);
    const rendered = await lines.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-line"))));
    expect(rendered).toEqual(Array.from({ length: lineCount }, (_, i) => i));
    await expect(page.getByTestId("agent-result")).toContainText("all lines written");
    await page.screenshot({ path: join(ARTIFACTS, "agent-after-restart.png") });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
