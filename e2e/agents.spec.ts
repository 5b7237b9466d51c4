import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeRepo } from "./fixtures/repo";
import { expect, test } from "./fixtures/server";
import { agentTokenOf, mutate, rowsOfType } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });


const script = (steps: unknown) => `Pick the colours.\n\n\`\`\`fake-agent\n${JSON.stringify(steps)}\n\`\`\`\n`;

test("spawn a fake agent from the form, watch its log, answer its question, see it resume and finish", async ({ page }) => {
  const repo = makeRepo();
  try {
    await page.goto("/agents");
    await expect(page.getByRole("heading", { name: "No agents yet" })).toBeVisible();
    await page.screenshot({ path: join(ARTIFACTS, "agents-empty.png") });
    // the spawn form is a page, as a run's and a daemon's are
    await page.getByRole("link", { name: "Start an agent" }).click();
    await expect(page).toHaveURL(/\/agents\/new$/);
    await expect(page.getByRole("heading", { level: 1, name: "New agent" })).toBeVisible();
    const form = page.getByTestId("spawn-agent-form");
    await form.getByLabel("Provider").selectOption("fake");
    await form.getByLabel("Git repository").fill(repo);
    await form.getByRole("button", { name: "Start agent" }).click();
    await expect(form.getByRole("alert")).toHaveText(/Write a task/);
    await form.getByLabel("Task").fill(
      script({
        steps: [{ text: "Reading the palette" }, { bash: "echo palette > palette.txt" }, { questions: [{ id: "q1", question: "Which colour should lead?" }] }],
        resume: [[{ text: "Using the answer" }, { write: { path: "choice.txt", content: "chosen\n" } }, { done: "Colours picked" }]],
      }),
    );
    await form.getByRole("button", { name: "Start agent" }).click();
    await expect(page).toHaveURL(/\/agents\/agent_/);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "waiting_for_input", { timeout: 20_000 });
    const log = page.getByTestId("agent-log");
    await expect(log).toContainText("Reading the palette");
    await expect(log.getByTestId("tool-call").first()).toContainText("Bash");
    // an empty result is labelled with its tool, and says it is empty
    await expect(log.getByTestId("tool-result").first()).toHaveText(/^← Bash \(no output\)$/);
    await page.screenshot({ path: join(ARTIFACTS, "agent-waiting.png"), fullPage: true });
    await page.getByLabel("Answer to q1").fill("Teal first");
    await page.getByRole("button", { name: "Answer and resume" }).click();
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    await expect(page.getByTestId("agent-result")).toContainText("Colours picked");
    await expect(log).toContainText("you: Here are the answers");
    await expect(log).toContainText("Using the answer");
    const ids = await log.getByTestId("agent-log-line").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-line"))));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await expect(page.getByTestId("agent-changes")).toContainText("choice.txt");
    await expect(page.getByTestId("agent-changes").getByRole("heading", { level: 2 })).toHaveText("Changes 2 files · +2 −0 · 1 commit");
    await page.getByRole("button", { name: "Show diff" }).click();
    await expect(page.getByTestId("agent-diff")).toContainText("+chosen");
    await page.screenshot({ path: join(ARTIFACTS, "agent-done.png"), fullPage: true });
    await page.goto("/agents");
    await expect(page.getByTestId("agent-row")).toHaveCount(1);
    await expect(page.getByTestId("agent-row").getByTestId("agent-status")).toHaveAttribute("data-status", "idle");
    await page.screenshot({ path: join(ARTIFACTS, "agents-list.png") });
    expect(existsSync(join(repo, "choice.txt"))).toBe(false);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("answer an agent's question and approve another's tool call from the Inbox; the count badge follows", async ({ page, request }) => {
  const repo = makeRepo();
  try {
    await page.goto("/inbox");
    await expect(page.getByRole("heading", { name: "Nothing needs you" })).toBeVisible();
    const asker = await mutate<{ id: string }>(request, "agents.spawn", {
      provider: "fake",
      repo,
      prompt: script({ steps: [{ questions: [{ id: "q1", question: "Which database?" }] }], resume: [[{ done: "Using the answer" }]] }),
    });
    const worker = await mutate<{ id: string }>(request, "agents.spawn", {
      provider: "fake",
      repo,
      permissionMode: "ask",
      prompt: script([{ permission: { tool: "Bash", input: { command: "touch approved.txt" } } }, { done: "Ran it" }]),
    });
    await expect(page.getByTestId("inbox-count")).toHaveText("2", { timeout: 20_000 });
    await expect(page.getByTestId("inbox-item")).toHaveCount(2);
    await page.screenshot({ path: join(ARTIFACTS, "inbox.png"), fullPage: true });
    const approval = page.locator('[data-testid="inbox-item"][data-kind="agent_approval"]');
    await expect(approval).toContainText("touch approved.txt");
    await approval.getByRole("button", { name: "Allow" }).click();
    await expect(page.getByTestId("inbox-count")).toHaveText("1");
    const question = page.locator('[data-testid="inbox-item"][data-kind="agent_question"]');
    await question.getByLabel("Answer to q1").fill("SQLite");
    await question.getByRole("button", { name: "Answer and resume" }).click();
    await expect(page.getByRole("heading", { name: "Nothing needs you" })).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId("inbox-count")).toHaveCount(0);
    for (const id of [asker.id, worker.id]) {
      await page.goto(`/agents/${id}`);
      await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    }
    await expect(page.getByTestId("agent-log")).toContainText("touch approved.txt");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("an agent blocked on a tool approval needs you: in the list, and at /agents/<alias> with the approval box; running again once allowed", async ({ page, request }) => {
  const repo = makeRepo();
  try {
    await mutate<{ id: string }>(request, "agents.spawn", {
      provider: "fake",
      repo,
      alias: "careful-heron",
      permissionMode: "ask",
      prompt: script([{ text: "About to touch a file" }, { permission: { tool: "Bash", input: { command: "touch approved.txt" } } }, { sleep: 6000 }, { done: "Touched it" }]),
    });
    await page.goto("/agents");
    const row = page.getByTestId("agent-row").filter({ hasText: "careful-heron" });
    await expect(row.getByTestId("agent-status")).toHaveText("Needs you", { timeout: 20_000 });
    await expect(row.getByTestId("agent-status")).toHaveAttribute("data-needs-you", "true");
    await expect(row.getByTestId("agent-status")).toHaveAttribute("data-status", "running");
    await page.screenshot({ path: join(ARTIFACTS, "agents-list-needs-you.png") });
    await page.goto("/agents/careful-heron");
    const status = page.getByTestId("agent-status");
    await expect(status).toHaveText("Needs you");
    const approval = page.getByTestId("agent-approval");
    await expect(approval).toContainText("Allow Bash?");
    await expect(approval).toContainText("touch approved.txt");
    await page.screenshot({ path: join(ARTIFACTS, "agent-needs-you-approval.png"), fullPage: true });
    await approval.getByRole("button", { name: "Allow" }).click();
    // the page follows the agent's events although its URL names the alias
    await expect(approval).toHaveCount(0);
    await expect(status).toHaveText("Running");
    await expect(status).not.toHaveAttribute("data-needs-you");
    await expect(status).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    await expect(page.getByTestId("agent-result")).toContainText("Touched it");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("a 1,000,000-line log opens at once, keeps under 300 rows in the DOM, and jumps to the end and to any line", async ({ page, request }) => {
  test.setTimeout(180_000);
  const repo = makeRepo();
  try {
    const agent = await mutate<{ id: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: script([{ lines: { count: 1_000_000, textBytes: 80 } }, { done: "a million lines" }]) });
    const input = encodeURIComponent(JSON.stringify({ agentId: agent.id }));
    await expect
      .poll(async () => ((await (await request.get(`/trpc/agents.get?input=${input}`)).json()) as { result: { data: { status: string } } }).result.data.status, { timeout: 120_000 })
      .toBe("idle");
    const started = Date.now();
    await page.goto(`/agents/${agent.id}`);
    const log = page.getByTestId("agent-log");
    await expect(log).toHaveAttribute("data-virtual", "true");
    await expect(log.locator('[data-testid="agent-log-line"]').filter({ hasText: "line 999999" }).first()).toBeVisible();
    const firstLineMs = Date.now() - started;
    // the bench measures it precisely; here only that the page does not load the whole log (which
    // takes minutes), with room for a busy CI machine
    expect(firstLineMs).toBeLessThan(15_000);
    expect(await log.locator('[data-testid="agent-log-line"]').count()).toBeLessThan(300);
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await expect(log.locator('[data-line="0"]')).toContainText("session");
    await page.getByLabel("Go to line").fill("500000");
    await page.getByRole("button", { name: "Go", exact: true }).click();
    await expect(log.locator('[data-line="500000"]')).toContainText("line 499999");
    expect(await log.locator('[data-testid="agent-log-line"]').count()).toBeLessThan(300);
    await page.getByRole("button", { name: "End", exact: true }).click();
    await expect(log.locator('[data-line="1000001"]')).toContainText("a million lines");
    await log.locator('[data-line="1000001"]').click();
    await expect(page.getByTestId("log-line-detail")).toContainText("line 1000001");
    await page.getByRole("button", { name: "Show raw JSONL" }).click();
    await expect(page.getByTestId("log-line-raw")).toContainText('"type":"result"');
    await page.screenshot({ path: join(ARTIFACTS, "agent-million-lines.png") });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("an agent's question to a human: answered in the Inbox, the thread shows on the agent page", async ({ page, request }) => {
  const repo = makeRepo();
  try {
    const agent = await mutate<{ id: string }>(request, "agents.spawn", {
      provider: "fake",
      repo,
      prompt: script([{ bash: 'yard ask "Deploy to staging first?" --from "$SWITCHYARD_AGENT_ID" --agent-id human --poll-interval 100' }, { done: "asked the human" }]),
    });
    await page.goto("/inbox");
    const item = page.locator('[data-testid="inbox-item"][data-kind="conversation"]');
    await expect(item).toContainText("Deploy to staging first?", { timeout: 20_000 });
    await item.getByLabel("Your answer").fill("Yes, staging first");
    await item.getByRole("button", { name: "Answer" }).click();
    await expect(page.getByRole("heading", { name: "Nothing needs you" })).toBeVisible();
    await page.goto(`/agents/${agent.id}`);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    const thread = page.getByTestId("conversation");
    await expect(thread).toHaveAttribute("data-status", "answered");
    await expect(thread).toContainText("A: Yes, staging first");
    await expect(page.getByTestId("agent-log")).toContainText("Yes, staging first");
    await page.screenshot({ path: join(ARTIFACTS, "agent-conversation.png"), fullPage: true });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("merge an agent's branch from its page: it shows merged, a follow-up's commit merges alone; a conflict is shown and changes nothing", async ({ page, request }) => {
  const repo = makeRepo();
  const env = { ...process.env, GIT_AUTHOR_NAME: "e2e", GIT_AUTHOR_EMAIL: "e2e@x.invalid", GIT_COMMITTER_NAME: "e2e", GIT_COMMITTER_EMAIL: "e2e@x.invalid" };
  try {
    const commit = (path: string, content: string) =>
      script([{ write: { path, content } }, { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${path}"` }, { done: `committed ${path}` }]);
    const withFollowUp = script({
      steps: [{ write: { path: "feature.txt", content: "feature\n" } }, { bash: 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "add feature.txt"' }, { done: "committed feature.txt" }],
      resume: [[{ write: { path: "feature.txt", content: "feature v2\n" } }, { bash: 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "feature v2"' }, { done: "v2" }]],
    });
    const good = await mutate<{ id: string; alias: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: withFollowUp });
    await page.goto(`/agents/${good.id}`);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    await expect(page.getByTestId("agent-changes").getByRole("heading", { level: 2 })).toHaveText("Changes 1 file · +1 −0 · 1 commit");
    await page.getByRole("button", { name: "Merge branch" }).click();
    await expect(page.getByTestId("merge-result")).toContainText("into main");
    expect(existsSync(join(repo, "feature.txt"))).toBe(true);
    const mergeCommit = execFileSync("git", ["rev-parse", "main"], { cwd: repo }).toString().trim();
    // merged: where, how, which commit, on the page; the button says so and does nothing more
    await expect(page.getByTestId("agent-merged")).toContainText(`Merged into main · merge · ${mergeCommit.slice(0, 8)}`);
    await expect(page.getByRole("button", { name: "Merged", exact: true })).toBeDisabled();
    await page.screenshot({ path: join(ARTIFACTS, "agent-merged.png"), fullPage: true });
    await page.goto("/agents");
    await expect(page.getByTestId("agent-row").filter({ hasText: good.alias }).getByTestId("agent-merged")).toHaveText("Merged into main");
    await page.screenshot({ path: join(ARTIFACTS, "agents-list-merged.png"), fullPage: true });
    // a follow-up commits again: only that commit is offered, and merged
    await mutate(request, "agents.message", { agentId: good.id, text: "make it v2" });
    await page.goto(`/agents/${good.id}`);
    await expect(page.getByRole("button", { name: "Merge 1 new commit" })).toBeVisible({ timeout: 20_000 });
    await page.getByRole("button", { name: "Merge 1 new commit" }).click();
    await expect(page.getByRole("button", { name: "Merged", exact: true })).toBeDisabled();
    expect(execFileSync("git", ["show", "main:feature.txt"], { cwd: repo }).toString()).toBe("feature v2\n");
    expect(execFileSync("git", ["rev-list", "--count", "--no-merges", "main", "--", "feature.txt"], { cwd: repo }).toString().trim()).toBe("2");

    const clash = await mutate<{ id: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: commit("README.md", "agent\n") });
    writeFileSync(join(repo, "README.md"), "human\n");
    execFileSync("git", ["commit", "-qam", "human"], { cwd: repo, env });
    await page.goto(`/agents/${clash.id}`);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    await page.getByRole("button", { name: "Merge branch" }).click();
    await expect(page.getByTestId("merge-error")).toContainText("conflicts in README.md");
    await page.screenshot({ path: join(ARTIFACTS, "agent-merge-conflict.png"), fullPage: true });
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo }).toString()).toBe("");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("/agents/new is the spawn form; the list fits 1440 px without a wrapped cell; the Overview names agents by alias; at 390 px the Inbox and its count stay in sight", async ({ page, request }) => {
  const repo = makeRepo();
  try {
    await page.goto("/agents/new");
    await expect(page.getByRole("heading", { level: 1, name: "New agent" })).toBeVisible();
    await expect(page.getByTestId("spawn-agent-form").getByLabel("Task")).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents" })).toHaveAttribute("aria-current", "page");

    await mutate(request, "agents.spawn", { provider: "fake", repo, alias: "curious-otter", prompt: script({ steps: [{ questions: [{ id: "q1", question: "Which colour?" }] }] }) });
    const longTask = `${"Refactor the billing module and cover every edge case with tests ".repeat(4).trim()}\n\n\`\`\`fake-agent\n${JSON.stringify([{ done: "Refactored" }])}\n\`\`\`\n`;
    await mutate(request, "agents.spawn", { provider: "fake", repo, alias: "meticulous-albatross-of-the-north", prompt: longTask });
    await page.goto("/agents");
    await expect(page.getByTestId("agent-row")).toHaveCount(2);
    await expect(page.getByTestId("agent-row").filter({ hasText: "curious-otter" }).getByTestId("agent-status")).toHaveText("Needs you", { timeout: 20_000 });
    await expect(page.getByTestId("agent-row").filter({ hasText: "meticulous-albatross" }).getByTestId("agent-status")).toHaveText("Done", { timeout: 20_000 });
    // every piece of text in the table sits on one line (the task is cut, in full on hover)
    const wrapped = await page.getByTestId("agents-table").evaluate((table) => {
      const out: string[] = [];
      const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent?.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) out.push(n.textContent);
      }
      return out;
    });
    expect(wrapped).toEqual([]);
    expect(await page.getByTestId("agents-table").evaluate((t) => t.scrollWidth <= t.parentElement!.clientWidth)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "agents-list-1440.png"), fullPage: true });

    // the Overview's feed names an agent by its alias (its id on hover and in the JSON)
    await page.goto("/");
    const spawned = rowsOfType(page, "agent.spawned").filter({ hasText: "curious-otter" });
    await expect(spawned.getByTestId("event-scope")).toHaveText("agent curious-otter");
    await expect(spawned.getByTestId("event-scope")).toHaveAttribute("data-id", /^agent_/);
    await page.goto("/agents");

    // a phone: the nav is a strip that scrolls sideways; the Inbox and its count never scroll away
    await page.setViewportSize({ width: 390, height: 844 });
    const badge = page.getByTestId("inbox-count");
    const strip = page.getByRole("navigation", { name: "Main" }).locator("ul");
    for (const to of ["start", "end"] as const) {
      await strip.evaluate((ul, where) => (ul.scrollLeft = where === "start" ? 0 : ul.scrollWidth), to);
      await expect(badge).toHaveText("1");
      await expect(badge).toBeInViewport({ ratio: 1 });
      // on top, not under another link of the strip
      expect(await badge.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return el.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      })).toBe(true);
    }
    await page.screenshot({ path: join(ARTIFACTS, "agents-list-390.png"), fullPage: true });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /Inbox/ }).click();
    await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
    await expect(page.getByTestId("inbox-item")).toHaveCount(1);
    await expect(badge).toBeInViewport({ ratio: 1 });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("an agent that spawned another: the child's page names its parent, the parent's page lists its child", async ({ page, request, yard }) => {
  const repo = makeRepo();
  try {
    const parent = await mutate<{ id: string; alias: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: script([{ done: "planned" }]) });
    // the child is spawned with the parent's own token, as its MCP spawn_agent tool or `yard agent spawn` inside it does
    const token = agentTokenOf(yard.home, parent.id);
    const res = await request.post("/trpc/agents.spawn", { data: { provider: "fake", prompt: script([{ done: "helped" }]) }, headers: { authorization: `Bearer ${token}` } });
    expect(res.status(), await res.text()).toBe(200);
    const child = ((await res.json()) as { result: { data: { id: string; alias: string; parentAgentId: string } } }).result.data;
    expect(child.parentAgentId).toBe(parent.id);

    await page.goto(`/agents/${child.alias}`);
    await expect(page.getByTestId("agent-family")).toContainText(`Spawned by ${parent.alias}`);
    await page.getByTestId("agent-family").getByRole("link", { name: parent.alias }).click();
    await expect(page).toHaveURL(new RegExp(`/agents/${parent.alias}$`));
    await expect(page.getByTestId("agent-family")).toContainText("Spawned 1 agent:");
    await expect(page.getByTestId("agent-family").getByRole("link", { name: child.alias })).toBeVisible();
    await page.screenshot({ path: join(ARTIFACTS, "agent-family.png") });
    // the list groups the tree: the child right under its parent, indented
    await page.goto("/agents");
    await expect(page.getByTestId("group-by-tree")).toBeChecked();
    const rows = page.getByTestId("agent-row");
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toContainText(parent.alias);
    await expect(rows.nth(1)).toContainText(child.alias);
    await expect(rows.nth(1)).toHaveAttribute("data-depth", "1");
    await page.screenshot({ path: join(ARTIFACTS, "agents-tree.png") });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("stopping an agent whose helpers still work asks whether to stop them too", async ({ page, request, yard }) => {
  const repo = makeRepo();
  try {
    const long = script([{ text: "working" }, { sleep: 60_000 }, { done: "late" }]);
    const parent = await mutate<{ id: string; alias: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: long });
    const token = agentTokenOf(yard.home, parent.id);
    const res = await request.post("/trpc/agents.spawn", { data: { provider: "fake", prompt: long }, headers: { authorization: `Bearer ${token}` } });
    const child = ((await res.json()) as { result: { data: { id: string; alias: string } } }).result.data;

    await page.goto(`/agents/${parent.alias}`);
    await expect(page.getByTestId("agent-family")).toContainText(child.alias);
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(page.getByTestId("agent-status").first()).toHaveAttribute("data-status", "stopped", { timeout: 15_000 });
    expect(asked).toContain(`spawned 1 agent that is still working (${child.alias})`);
    await expect(page.getByTestId("agent-family").getByTestId("agent-status")).toHaveAttribute("data-status", "stopped", { timeout: 15_000 });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
