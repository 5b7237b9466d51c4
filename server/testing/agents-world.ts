import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentInfo } from "../../shared/agents";
import type { AgentStatus } from "../../shared/statuses";
import type { SwitchyardClient } from "../client";
import { startFakeModelServer, type FakeModelServer, type FakeModelServerOptions } from "./fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "./server-harness";

/** Test support for CLI agents: a fake model, the real server pointed at it, a git repo to work on. */
export type AgentsWorld = {
  fake: FakeModelServer;
  t: TestServer;
  /** A git repository with one commit on `main`. */
  repo: string;
  stop(): Promise<void>;
};

export const GIT_ENV = {
  GIT_AUTHOR_NAME: "Switchyard Test",
  GIT_AUTHOR_EMAIL: "test@switchyard.invalid",
  GIT_COMMITTER_NAME: "Switchyard Test",
  GIT_COMMITTER_EMAIL: "test@switchyard.invalid",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
}

/** A fresh repository with README.md committed on `main`. */
export function makeRepo(prefix = "switchyard-repo-"): string {
  const repo = tempHome(prefix);
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "# test repo\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "initial");
  return repo;
}

export async function startAgentsWorld(
  options: { env?: Record<string, string>; home?: string; agentHost?: "local" | "loopback"; fakeModel?: FakeModelServerOptions } = {},
): Promise<AgentsWorld> {
  const fake = await startFakeModelServer(options.fakeModel);
  const home = options.home ?? tempHome();
  mkdirSync(home, { recursive: true });
  const t = await startTestServer({
    home,
    env: {
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      SWITCHYARD_AGENT_RESULT_GRACE_MS: "1500",
      // tests read agents' worktrees after they finish: cleanup is tested on its own (cleanup.int.test.ts)
      SWITCHYARD_AGENT_CLEANUP: "off",
      // ...and as the agent left them (autocommit is tested on its own too, in cleanup.int.test.ts)
      SWITCHYARD_AGENT_AUTOCOMMIT: "off",
      ...options.env,
    },
    ...(options.agentHost ? { agentHost: options.agentHost } : {}),
  });
  const repo = makeRepo();
  return {
    fake,
    t,
    repo,
    async stop() {
      await t.stop();
      await fake.close();
      removeHome(t.home);
      removeHome(repo);
    },
  };
}

/** Poll until the agent is in one of `statuses` (default: any finished one). */
export async function waitForAgent(
  client: SwitchyardClient,
  agentId: string,
  statuses: AgentStatus[] = ["idle", "waiting_for_input", "crashed", "stopped"],
  timeoutMs = 60_000,
): Promise<AgentInfo> {
  const deadline = Date.now() + timeoutMs;
  let last: AgentInfo | undefined;
  while (Date.now() < deadline) {
    last = await client.agents.get.query({ agentId });
    if (statuses.includes(last.status)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`agent ${agentId} did not reach ${statuses.join("|")} in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}
