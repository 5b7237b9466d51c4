import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeRepo } from "./fixtures/repo";
import { expect, test } from "./fixtures/server";
import { mutate } from "./helpers";

const ARTIFACTS = resolve(import.meta.dirname, "artifacts");
mkdirSync(ARTIFACTS, { recursive: true });

const script = (steps: unknown) => `Work.\n\n\`\`\`fake-agent\n${JSON.stringify(steps)}\n\`\`\`\n`;

test("the Conversations page: threads between agents and to you, filters, answering a pending one", async ({ page, request }) => {
  const repo = makeRepo("switchyard-e2e-conv-");
  try {
    await page.goto("/conversations");
    await expect(page.getByRole("heading", { name: "No conversations yet" })).toBeVisible();

    // an agent asks a human, and waits for the answer (yard ask from inside the agent)
    const asker = await mutate<{ id: string; alias: string }>(request, "agents.spawn", {
      provider: "fake",
      repo,
      prompt: script([{ bash: 'yard ask "Which region should we deploy to?" --from "$SWITCHYARD_AGENT_ID" --agent-id human --poll-interval 100' }, { done: "deployed as told" }]),
    });
    // and an agent asks another one (through the API, as `yard ask --agent-id` does)
    const other = await mutate<{ id: string; alias: string }>(request, "agents.spawn", { provider: "fake", repo, prompt: script([{ done: "ready" }]), taskId: "db" });
    await mutate(request, "conversations.ask", { fromAgentId: asker.id, toAgentId: other.id, question: "Is the schema migrated?" });

    const threads = page.getByTestId("conversation-thread");
    await expect(threads).toHaveCount(2, { timeout: 20_000 });
    const toHuman = threads.filter({ hasText: "Which region should we deploy to?" });
    await expect(toHuman).toHaveAttribute("data-status", "pending");
    await expect(toHuman).toContainText(`${asker.alias} asked you`);
    const toAgent = threads.filter({ hasText: "Is the schema migrated?" });
    await expect(toAgent).toContainText(`${asker.alias} asked ${other.alias}`);
    await expect(toAgent.getByRole("link", { name: other.alias })).toHaveAttribute("href", `/agents/${other.id}`);
    await page.screenshot({ path: join(ARTIFACTS, "conversations.png"), fullPage: true });

    await toHuman.getByLabel("Your answer").fill("eu-west, please");
    await toHuman.getByRole("button", { name: "Answer" }).click();
    await expect(toHuman).toHaveAttribute("data-status", "answered");
    await expect(toHuman).toContainText("eu-west, please");

    await page.getByRole("radio", { name: /Pending/ }).click();
    await expect(threads).toHaveCount(1);
    await expect(threads.first()).toContainText("Is the schema migrated?");
    await page.getByRole("radio", { name: "Answered" }).click();
    await expect(threads).toHaveCount(1);
    await expect(threads.first()).toContainText("eu-west, please");

    // the asking agent got the answer and went on
    await page.goto(`/agents/${asker.id}`);
    await expect(page.getByTestId("agent-status")).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
    await expect(page.getByTestId("agent-log")).toContainText("eu-west, please");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
