import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeRepo } from "./fixtures/repo";
import { expect, test } from "./fixtures/server";
import { startRun } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

/** A git repository with a strategies/ folder: a CLI step works in a worktree of it. */
function repoWithStrategy(yaml: string): { repo: string; strategyPath: string } {
  const repo = makeRepo("switchyard-e2e-cli-");
  mkdirSync(join(repo, "strategies"));
  const strategyPath = join(repo, "strategies", "cli.yaml");
  writeFileSync(strategyPath, yaml);
  return { repo, strategyPath };
}

const STRATEGY = `name: Plan, code, review
version: "1"
budget: {tokens: 100000}
agents:
  plan: {model: mock/echo}
  implement: {type: cli, provider: fake}
  review: {model: mock/echo}
flow:
  type: sequential
  steps: [{agent: plan}, {agent: implement}, {agent: review}]
`;

test("a strategy with a CLI step: the node shows its provider and branch and links to the agent; the budget meter follows the spend", async ({ page, request }) => {
  const { repo, strategyPath } = repoWithStrategy(STRATEGY);
  try {
    const script = JSON.stringify([{ text: "Coding it" }, { write: { path: "feature.txt", content: "done\n" } }, { bash: "git add -A && git -c user.name=a -c user.email=a@b commit -qm feature" }, { done: "feature.txt added" }]);
    const runId = await startRun(request, { strategyPath, cwd: repo, input: `Add the feature.\n\n\`\`\`fake-agent\n${script}\n\`\`\`\n` });
    await page.goto(`/runs/${runId}`);
    const node = page.locator('[data-testid="flow-node"][data-agent="implement"]');
    await expect(node).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
    await expect(page.locator('[data-testid="flow-node"][data-agent="review"]')).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
    await expect(node).toContainText("fake ·");
    await expect(page.getByTestId("run-budget")).toContainText("/ 100K tokens");
    await expect(page.getByTestId("run-budget").getByRole("meter")).toHaveCount(1);
    await page.screenshot({ path: join(ARTIFACTS, "run-cli-step.png"), fullPage: true });
    await page.goto("/runs");
    await expect(page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`).getByTestId("run-cost")).toHaveText(/^\$0\.\d{4}$/);
    await page.goto(`/runs/${runId}`);
    await node.getByTestId("flow-node-agent-link").click();
    await expect(page).toHaveURL(/\/agents\/agent_/);
    await expect(page.getByTestId("agent-result")).toContainText("feature.txt added");
    await expect(page.getByTestId("agent-log")).toContainText("Coding it");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("accounts: add one from the page; it shows (secret hidden) and is offered in the agent spawn form", async ({ page }) => {
  await page.goto("/accounts");
  await expect(page.getByRole("heading", { name: /No accounts/ })).toBeVisible();
  await page.getByRole("link", { name: "Add an account" }).click();
  await expect(page).toHaveURL(/\/accounts\/new$/);
  const form = page.getByTestId("add-account-form");
  // the providers whose adapter takes accounts, and the kinds each takes
  await expect(form.getByLabel("Provider").locator("option")).toHaveText(["Claude Code", "Codex", "Fake agent (demo)"]);
  await form.getByLabel("Provider").selectOption("codex");
  await expect(form.getByLabel("Kind").locator("option")).toHaveText(["API key"]);
  await form.getByLabel("Provider").selectOption("claude");
  await expect(form.getByLabel("Kind").locator("option")).toHaveCount(3);
  await form.getByRole("button", { name: "Add account" }).click();
  await expect(form.getByRole("alert")).toHaveText(/Paste the API key/);
  await form.getByLabel("Label").fill("team-a");
  await form.getByLabel("API key", { exact: true }).fill("sk-ant-e2e-secret-9876");
  await form.getByRole("button", { name: "Add account" }).click();
  await expect(page).toHaveURL(/\/accounts$/);
  const row = page.getByTestId("account-row");
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("data-status", "available");
  await expect(row.getByTestId("account-status")).toHaveText("Available");
  await expect(row).toContainText("team-a");
  await expect(row).toContainText("…9876");
  await expect(page.locator("body")).not.toContainText("sk-ant-e2e-secret-9876");
  await page.screenshot({ path: join(ARTIFACTS, "accounts.png"), fullPage: true });

  await page.goto("/agents/new");
  const spawn = page.getByTestId("spawn-agent-form");
  await spawn.getByLabel("Provider").selectOption("fake");
  await expect(spawn.getByLabel("Account")).toHaveCount(0);
  await spawn.getByLabel("Provider").selectOption("claude");
  await expect(spawn.getByLabel("Account").locator("option")).toHaveText(["Least recently used", "team-a"]);
  // what `ask` means is the provider's to say: claude routes approvals to a human, codex exec cannot
  await spawn.getByLabel("Permissions").selectOption("ask");
  await expect(spawn.getByTestId("ask-means")).toHaveAttribute("data-human", "true");
  await spawn.getByLabel("Provider").selectOption("codex");
  await expect(spawn.getByTestId("ask-means")).toHaveAttribute("data-human", "false");
  await expect(spawn.getByTestId("ask-means")).toContainText("cannot ask");
});

test("an agent whose work cannot be committed: the warning shows; discard and clean up from its page", async ({ page, request }) => {
  const { repo } = repoWithStrategy(STRATEGY);
  try {
    // a stale index.lock (as a crashed git leaves) makes Switchyard's own commit of the work fail too
    const steps = [{ write: { path: "scratch.txt", content: "temp\n" } }, { bash: 'touch "$(git rev-parse --git-dir)/index.lock"' }, { done: "left scratch.txt" }];
    const prompt = `Scratch.\n\n\`\`\`fake-agent\n${JSON.stringify({ steps, ignoreCommitRequest: true })}\n\`\`\`\n`;
    const res = await request.post("/trpc/agents.spawn", { data: { provider: "fake", repo, prompt } });
    expect(res.status()).toBe(200);
    const agent = ((await res.json()) as { result: { data: { id: string } } }).result.data;
    await page.goto(`/agents/${agent.id}`);
    await expect(page.getByTestId("cleanup-warning")).toContainText("scratch.txt", { timeout: 30_000 });
    await expect(page.getByTestId("cleanup-warning")).toContainText("committing it failed");
    await expect(page.getByTestId("agent-changes")).toContainText("uncommitted work");
    await page.screenshot({ path: join(ARTIFACTS, "agent-cleanup-warning.png"), fullPage: true });
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Discard and clean up" }).click();
    await expect(page.getByTestId("worktree-cleaned")).toBeVisible();
    await expect(page.getByTestId("cleanup-warning")).toHaveCount(0);
    await expect(page.getByRole("button", { name: /clean up/i })).toHaveCount(0);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
