import { chromium, type Browser } from "@playwright/test";
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { dashboardBuild, startBenchServer, type BenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { sleep } from "./rounds";
import { fmt, median, type BenchRow } from "./table";

/** Gzipped size of the JS the first page loads: the entry script and its modulepreloads. */
export function firstPageJsGzip(webDir: string): number {
  const html = readFileSync(join(webDir, "index.html"), "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  return [...new Set(files)].reduce((sum, f) => sum + gzipSync(readFileSync(join(webDir, f))).length, 0);
}

/** Stored lines of an agent's log that its CLI wrote (Switchyard's own notes left out). */
function storedCliLines(dbPath: string, agentId: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    let n = 0;
    for (const row of db.prepare("SELECT content FROM agent_log_chunks WHERE agent_id = ?").iterate(agentId) as Iterable<{ content: string }>) {
      for (const line of row.content.split("\n")) if (!line.startsWith('{"type":"switchyard"')) n++;
    }
    return n;
  } finally {
    db.close();
  }
}

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Records, from navigation start (the page's performance.now()), the first animation frame at
 * which `selector` matches an element whose text contains `text`: when it is on screen. A string,
 * so the bundler's helpers are not needed in the page.
 */
export const firstFrameScript = (selector: string, text: string) => `(() => {
  const check = () => {
    for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
      if ((el.textContent || "").includes(${JSON.stringify(text)})) { window.__benchSeenAt = performance.now(); return; }
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})()`;

/**
 * Paging through the log for `seconds`: one page (the box's height) each animation frame, down
 * from the top or up from the tail. Each frame first looks at what the previous one painted: a
 * frame counts as content only when every row in view shows its line; one with a placeholder
 * ("…", the line not loaded yet) or no row in view is counted apart.
 */
const pagingScript = (direction: "down" | "up", seconds: number) => `(async () => {
  const el = document.querySelector('[data-testid="agent-log"]');
  el.scrollTop = ${direction === "down" ? 0 : "el.scrollHeight"};
  const inView = () => {
    const box = el.getBoundingClientRect();
    let rows = 0, placeholders = 0;
    for (const r of el.querySelectorAll('[data-testid="agent-log-line"]')) {
      const b = r.getBoundingClientRect();
      if (b.bottom <= box.top || b.top >= box.bottom) continue;
      rows++;
      const spans = r.querySelectorAll("span");
      if (spans.length && spans[spans.length - 1].textContent === "…") placeholders++;
    }
    return { rows, placeholders };
  };
  // the first page in view shows its lines before the clock starts
  for (const t = performance.now(); performance.now() - t < 5000; ) {
    await new Promise((r) => requestAnimationFrame(r));
    const v = inView();
    if (v.rows > 0 && v.placeholders === 0) break;
  }
  let frames = 0, content = 0, placeholderFrames = 0, maxDom = 0;
  const t0 = performance.now();
  await new Promise((done) => {
    const step = () => {
      frames++;
      const v = inView();
      if (v.rows > 0 && v.placeholders === 0) content++; else placeholderFrames++;
      maxDom = Math.max(maxDom, el.querySelectorAll('[data-testid="agent-log-line"]').length);
      el.scrollTop += ${direction === "down" ? "" : "-"}el.clientHeight;
      if (performance.now() - t0 < ${seconds * 1000}) requestAnimationFrame(step); else done();
    };
    requestAnimationFrame(step);
  });
  const s = (performance.now() - t0) / 1000;
  return { fps: frames / s, contentFps: content / s, frames, placeholderFrames, maxDom };
})()`;

type Paging = { fps: number; contentFps: number; frames: number; placeholderFrames: number; maxDom: number };

/**
 * The agent page on a `lines`-line log in Debian's Chromium (production build): time from
 * navigation start to the newest line on screen, in a cold browser context each time (median of
 * `loads`); the frame rate while paging a page per frame for `scrollSeconds`, down from the top
 * and up from the tail, counting only frames whose rows in view show their lines; the rows in the
 * DOM; the first page's JS.
 */
export async function benchAgentLogPage(options: { lines?: number; loads?: number; scrollSeconds?: number; quick?: boolean } = {}): Promise<BenchRow[]> {
  const lines = options.lines ?? 1_000_000;
  const loads = options.loads ?? 5;
  const scrollSeconds = options.scrollSeconds ?? 5;
  const webDir = dashboardBuild(options.quick ?? false);
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  let server: BenchServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startBenchServer({ home, env: { SWITCHYARD_WEB_DIR: webDir } });
    const api = createSwitchyardClient({ url: server.url });
    const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt("log", [{ lines: { count: lines, textBytes: 100 } }, { done: "done" }]) });
    let info = await api.agents.get.query({ agentId: agent.id });
    while (info.status === "running" || info.status === "starting") {
      await sleep(250);
      info = await api.agents.get.query({ agentId: agent.id });
    }
    const stored = storedCliLines(join(home, "switchyard.db"), agent.id);
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const target = `line ${lines - 1}`;
    const firstLines: number[] = [];
    let paging: { down: Paging; up: Paging } | undefined;
    for (let i = 0; i < loads; i++) {
      await waitIdle(server.pid);
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      try {
        const page = await context.newPage();
        await page.addInitScript(firstFrameScript('[data-testid="agent-log-line"]', target));
        const seen = await measured(async () => {
          await page.goto(`${server!.url}/agents/${agent.id}`);
          await page.waitForFunction(() => (window as unknown as { __benchSeenAt?: number }).__benchSeenAt !== undefined, undefined, { timeout: 60_000, polling: 50 });
          return page.evaluate(() => (window as unknown as { __benchSeenAt: number }).__benchSeenAt);
        });
        firstLines.push(seen);
        if (i === loads - 1) {
          await waitIdle(server.pid);
          const down = await measured(async () => (await page.evaluate(pagingScript("down", scrollSeconds))) as Paging);
          const up = await measured(async () => (await page.evaluate(pagingScript("up", scrollSeconds))) as Paging);
          paging = { down, up };
        }
      } finally {
        await context.close();
      }
    }
    const first = median(firstLines);
    const { down, up } = paging!;
    const fps = Math.min(down.contentFps, up.contentFps);
    const dom = Math.max(down.maxDom, up.maxDom);
    const side = (p: Paging) => `${p.contentFps.toFixed(0)} fps (${p.placeholderFrames}/${p.frames} frames with placeholders)`;
    const bundle = firstPageJsGzip(webDir);
    // what the fake agent wrote: its init line, the lines, its result
    const persisted = { sent: lines + 2, arrived: stored, unit: "agent lines stored" };
    return [
      { bench: "agent log page", metric: `navigation start -> newest line on screen, ${fmt.int(lines)}-line log, cold context (median of ${loads})`, value: fmt.ms(first), goal: "< 500 ms", met: first < 500, count: persisted },
      { bench: "agent log page", metric: `frame rate paging a page per frame for ${scrollSeconds} s, frames showing content only`, value: `down from the top ${side(down)}; up from the tail ${side(up)}`, goal: ">= 50 fps", met: fps >= 50 },
      { bench: "agent log page", metric: "log rows in the DOM while paging", value: fmt.int(dom), goal: "< 300", met: dom < 300 },
      { bench: "agent log page", metric: "first-page JS (gzip)", value: `${(bundle / 1024).toFixed(0)} KB`, goal: "< 250 KB", met: bundle < 250 * 1024, size: true },
    ];
  } finally {
    await browser?.close();
    await server?.stop();
    removeHome(home);
    removeHome(repo);
  }
}
