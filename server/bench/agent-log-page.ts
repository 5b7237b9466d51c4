import { chromium } from "@playwright/test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createSwitchyardClient } from "../client";
import { REPO_ROOT } from "../paths";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

/** Gzipped size of the JS the first page loads: the entry script and its modulepreloads. */
export function firstPageJsGzip(webDir = join(REPO_ROOT, "dist", "web")): number {
  const html = readFileSync(join(webDir, "index.html"), "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  return [...new Set(files)].reduce((sum, f) => sum + gzipSync(readFileSync(join(webDir, f))).length, 0);
}

/**
 * The agent page on a 1,000,000-line log in Debian's Chromium: time from navigation to the last
 * line on screen, frames per second while scrolling up through the log, and the first-page bundle.
 */
export async function benchAgentLogPage(options: { lines?: number } = {}): Promise<BenchRow[]> {
  const lines = options.lines ?? 1_000_000;
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  const server = await spawnServer({ home, build: true, env: { SWITCHYARD_LOG_LEVEL: "warn" } });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
  try {
    const api = createSwitchyardClient({ url: server.url });
    const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt("log", [{ lines: { count: lines, textBytes: 100 } }, { done: "done" }]) });
    while ((await api.agents.get.query({ agentId: agent.id })).status !== "idle") await new Promise((r) => setTimeout(r, 250));
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/agents`); // warm the bundle cache as a returning user has it
    const started = Date.now();
    await page.goto(`${server.url}/agents/${agent.id}`);
    await page.locator('[data-testid="agent-log-line"]').filter({ hasText: `line ${lines - 1}` }).first().waitFor();
    const firstLineMs = Date.now() - started;
    // a string, so the bundler's helpers (keepNames) are not needed in the page
    const fps = (await page.evaluate(`(async () => {
      const el = document.querySelector('[data-testid="agent-log"]');
      let frames = 0;
      const t0 = performance.now();
      await new Promise((done) => {
        const step = () => {
          frames++;
          el.scrollTop = Math.max(0, el.scrollTop - 400);
          if (performance.now() - t0 < 3000) requestAnimationFrame(step);
          else done();
        };
        requestAnimationFrame(step);
      });
      return frames / ((performance.now() - t0) / 1000);
    })()`)) as number;
    const domRows = await page.locator('[data-testid="agent-log-line"]').count();
    const bundle = firstPageJsGzip();
    return [
      { bench: "agent log page", metric: `first rendered line, ${lines.toLocaleString("en-US")}-line log`, value: fmt.ms(firstLineMs), goal: "< 1000 ms", met: firstLineMs < 1000 },
      { bench: "agent log page", metric: "frame rate while scrolling", value: `${fps.toFixed(0)} fps (${domRows} rows in the DOM)`, goal: ">= 50 fps, < 300 rows", met: fps >= 50 && domRows < 300 },
      { bench: "agent log page", metric: "first-page JS (gzip)", value: `${(bundle / 1024).toFixed(0)} KB`, goal: "< 250 KB", met: bundle < 250 * 1024 },
    ];
  } finally {
    await browser.close();
    await server.kill("SIGTERM");
    removeHome(home);
    removeHome(repo);
  }
}
