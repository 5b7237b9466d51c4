import { chromium, type Browser } from "@playwright/test";
import Database from "better-sqlite3";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { CommaClient } from "../testing/comma-client";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { CHROMIUM } from "./agent-log-page";
import { dashboardBuild, startBenchServer, type BenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { sleep } from "./rounds";
import { spawnFakeModel } from "./strategy-stream";
import { fmt, median, type BenchRow } from "./table";

/**
 * Dashboard first load: navigation start -> the first 50 rows of the Runs list (and of the
 * Agents list) in the DOM, the first of them on screen, and the navigation drawn, in a cold
 * browser context (median of `loads`), production build, with `runs` runs and `agents` agents in
 * the store. The store is filled by copying one real run and one real agent, made through the API,
 * row by row in SQLite with fresh ids (the server stopped meanwhile), so every row is one the
 * server wrote. Counted: the rows the page drew of the first 50.
 */

/** Copies of `id`'s row in `table`, `n` of them, with fresh ids (its last 12 hex digits replaced) and the given columns changed. */
function copyRows(db: Database.Database, table: string, id: string, n: number, change: (i: number) => Record<string, unknown>): void {
  const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  const original = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown>;
  const insert = db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
  db.transaction(() => {
    for (let i = 1; i <= n; i++) {
      const row: Record<string, unknown> = { ...original, ...change(i), id: `${id.slice(0, -12)}${i.toString(16).padStart(12, "0")}` };
      insert.run(columns.map((c) => row[c] ?? null));
    }
  })();
}

/** Records the first animation frame at which `rows` rows and the navigation are drawn, the first row on screen. */
const loadedScript = (rowSelector: string, rows: number) => `(() => {
  const check = () => {
    const list = document.querySelectorAll(${JSON.stringify(rowSelector)});
    const nav = document.querySelectorAll('nav[aria-label="Main"] a').length;
    const first = list[0] && list[0].getBoundingClientRect();
    if (list.length >= ${rows} && nav > 0 && first && first.top < innerHeight && first.bottom > 0) {
      window.__benchSeenAt = performance.now();
      window.__benchRows = list.length;
      return;
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})()`;

async function seed(home: string, repo: string, runs: number, agents: number): Promise<void> {
  const fake = await spawnFakeModel();
  const cwd = tempHome("switchyard-bench-cwd-");
  let server: BenchServer | undefined;
  try {
    server = await startBenchServer({ home, env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "bench" } });
    const api = createSwitchyardClient({ url: server.url });
    const strategyPath = join(cwd, "hello.yaml");
    writeFileSync(strategyPath, `name: Hello\nversion: "1.0"\nagents:\n  talker: {model: anthropic/claude-bench, systemPrompt: "SAY[hello there]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
    const c = await CommaClient.connect(server.url);
    const prepared = await c.request({ type: "prepare_run", strategyPath, cwd });
    const runId = prepared.runId as string;
    c.send({ type: "start_run", runId, input: "go" });
    await c.waitFor((f) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 60_000);
    c.close();
    const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt("a small task", [{ text: "Looking." }, { done: "done" }]) });
    while (["starting", "running", "queued"].includes((await api.agents.get.query({ agentId: agent.id })).status)) await sleep(100);
    await server.stop();
    server = undefined;
    const db = new Database(join(home, "switchyard.db"));
    try {
      const base = Date.now() - runs * 60_000;
      copyRows(db, "runs", runId, runs - 1, (i) => ({ started_at: base + i * 60_000, completed_at: base + i * 60_000 + 5_000 }));
      const alias = (db.prepare("SELECT alias FROM agents WHERE id = ?").get(agent.id) as { alias: string }).alias;
      copyRows(db, "agents", agent.id, agents - 1, (i) => ({ alias: `${alias}-${i}`, created_at: base + i * 600_000, updated_at: base + i * 600_000 }));
    } finally {
      db.close();
    }
  } finally {
    await server?.stop();
    fake.close();
    removeHome(cwd);
  }
}

/** One GET of a list query as the page makes it (its first page): its wall time and the bytes of its answer. */
async function listQuery(url: string, procedure: string, input: unknown): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`);
  const body = await res.arrayBuffer();
  return { ms: performance.now() - started, bytes: body.byteLength };
}

export async function benchDashboardLoad(options: { runs?: number; agents?: number; loads?: number; quick?: boolean } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? 10_000;
  const agents = options.agents ?? 1_000;
  const loads = options.loads ?? 5;
  const webDir = dashboardBuild(options.quick ?? false);
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  let server: BenchServer | undefined;
  let browser: Browser | undefined;
  try {
    await seed(home, repo, runs, agents);
    server = await startBenchServer({ home, env: { SWITCHYARD_WEB_DIR: webDir } });
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const rows: BenchRow[] = [];
    for (const list of [
      // the input of the page's first request (web/src/runs/RunsListPage.tsx, web/src/agents/AgentsListPage.tsx)
      { name: "Runs", path: "/runs", row: '[data-testid="run-row"]', procedure: "runs.list", input: { limit: 50 } },
      { name: "Agents", path: "/agents", row: '[data-testid="agent-row"]', procedure: "agents.list", input: { limit: 50 } },
    ]) {
      // where the time goes: the list query the page makes, alone (its time and its size)
      await waitIdle(server.pid);
      const api = await listQuery(server.url, list.procedure, list.input);
      const times: number[] = [];
      let drawn = 0;
      let shown = 0;
      for (let i = 0; i < loads; i++) {
        await waitIdle(server.pid);
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        try {
          const page = await context.newPage();
          await page.addInitScript(loadedScript(list.row, 50));
          const got = await measured(async () => {
            await page.goto(`${server!.url}${list.path}`);
            await page.waitForFunction(() => (window as unknown as { __benchSeenAt?: number }).__benchSeenAt !== undefined, undefined, { timeout: 60_000, polling: 50 }).catch(() => undefined);
            return page.evaluate(() => ({ at: (window as unknown as { __benchSeenAt?: number }).__benchSeenAt, rows: (window as unknown as { __benchRows?: number }).__benchRows ?? 0 }));
          });
          if (got.at !== undefined) times.push(got.at);
          drawn += Math.min(50, got.rows);
          shown = Math.max(shown, await page.locator(list.row).count());
        } finally {
          await context.close();
        }
      }
      const ms = times.length === loads ? median(times) : Number.POSITIVE_INFINITY;
      rows.push({
        bench: "dashboard first load",
        metric: `navigation start -> first 50 rows of the ${list.name} list + the nav, ${fmt.int(runs)} runs / ${fmt.int(agents)} agents stored, cold context (median of ${loads})`,
        value: `${fmt.ms(ms)} (${fmt.int(shown)} rows in the DOM at the end; ${list.procedure} alone ${fmt.ms(api.ms)}, ${(api.bytes / 1024).toFixed(0)} KB)`,
        goal: "< 1000 ms",
        met: ms < 1000,
        count: { sent: 50 * loads, arrived: drawn, unit: "first rows" },
      });
    }
    return rows;
  } finally {
    await browser?.close();
    await server?.stop();
    removeHome(home);
    removeHome(repo);
  }
}
