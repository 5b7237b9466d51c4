import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../paths";
import { removeHome, tempHome } from "../testing/server-harness";
import { benchStrategyStream } from "./strategy-stream";
import { countOk, verdict, type BenchRow, type Verdict } from "./table";

/**
 * Keeps `npm run bench` from rotting: the quick run (small sizes, one round) of every bench must
 * run through, and on every row that moves something what arrived must be what was sent. And the
 * strategy row must see a lost delta: a model stand-in that drops one turns it MISSED.
 */

/**
 * An HTTP proxy to the fake model that drops the `nth` text delta of the first answer streamed
 * through it (an Anthropic SSE `content_block_delta` event), passing everything else on.
 */
async function deltaDroppingProxy(target: string, nth: number): Promise<{ url: string; close: () => void; dropped: () => string | undefined }> {
  let dropped: string | undefined;
  const server = createServer((req, res) => {
    const up = new URL(req.url ?? "/", target);
    const forward = request(up, { method: req.method, headers: { ...req.headers, host: up.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      let seen = 0;
      let buffer = "";
      answer.setEncoding("utf8");
      answer.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end + 2);
          buffer = buffer.slice(end + 2);
          if (dropped === undefined && block.includes('"text_delta"') && ++seen === nth) {
            dropped = block;
            continue;
          }
          res.write(block);
        }
      });
      answer.on("end", () => res.end(buffer));
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => server.close(), dropped: () => dropped };
}

describe("npm run bench -- --quick", () => {
  it("runs every bench, and what arrived is what was sent on every row", () => {
    const dir = tempHome("switchyard-bench-smoke-");
    try {
      const json = join(dir, "rows.json");
      const run = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server", "bench", "main.ts"), "--quick", `--json=${json}`], {
        cwd: REPO_ROOT,
        encoding: "utf8",
        timeout: 300_000,
        env: { ...process.env, NODE_ENV: "production" },
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const rows = JSON.parse(readFileSync(json, "utf8")) as Array<BenchRow & { verdict: Verdict }>;
      const failed = rows.filter((r) => r.metric === "the bench failed");
      expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
      const lost = rows.filter((r) => r.count && !countOk(r.count));
      expect(lost, run.stdout).toEqual([]);
      // every bench counts what it moved on at least one row, and every goal gets a verdict
      const benches = [...new Set(rows.map((r) => r.bench))];
      expect(benches.length).toBeGreaterThanOrEqual(10);
      for (const bench of benches) expect(rows.some((r) => r.bench === bench && r.count && r.count.sent > 0), bench).toBe(true);
      for (const r of rows) expect(r.verdict).toBe(verdict(r));
    } finally {
      removeHome(dir);
    }
  }, 300_000);

  it("a delta lost between the model and the client turns the strategy row MISSED", async () => {
    let proxy: Awaited<ReturnType<typeof deltaDroppingProxy>> | undefined;
    const rows = await benchStrategyStream({
      deltas: 300,
      parallel: 1,
      rounds: 1,
      interposeModel: async (url) => (proxy = await deltaDroppingProxy(url, 7)),
    });
    expect(proxy?.dropped()).toContain('"text":"t6 "');
    const row = rows[0]!;
    expect(row.count).toMatchObject({ sent: 300, arrived: 299, intact: false });
    expect(verdict({ ...row, load: 0 })).toBe("MISSED");
    expect(verdict(row)).toBe("MISSED");
  }, 120_000);
});
