import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeModelServer, type FakeModelServer } from "./fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "./server-harness";

/** Test support for strategy runs: a fake model, the real server pointed at it, a temp cwd with strategies/. */
export type RunsWorld = {
  fake: FakeModelServer;
  t: TestServer;
  cwd: string;
  /** Write `strategies/<name>.yaml` in the cwd; returns its path. */
  strategy(name: string, body: string): string;
  stop(): Promise<void>;
};

export async function startRunsWorld(prefix = "switchyard-cwd-"): Promise<RunsWorld> {
  const fake = await startFakeModelServer();
  const t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "test-key" } });
  const cwd = tempHome(prefix);
  mkdirSync(join(cwd, "strategies"));
  return {
    fake,
    t,
    cwd,
    strategy(name, body) {
      const path = join(cwd, "strategies", `${name}.yaml`);
      writeFileSync(path, body);
      return path;
    },
    async stop() {
      await t.stop();
      await fake.close();
      removeHome(t.home);
      removeHome(cwd);
    },
  };
}
