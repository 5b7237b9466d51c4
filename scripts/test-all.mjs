#!/usr/bin/env node
// `npm test`: unit + integration (vitest; the integration files again on PostgreSQL:
// integration-pg), then e2e (Playwright in Debian's Chromium).
// Prints each stage's duration and ends with one plain line: "N passed, N failed".
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const results = join(root, "test-results");
mkdirSync(results, { recursive: true });
const bin = (name) => join(root, "node_modules", ".bin", name);
const only = process.argv.slice(2); // e.g. `npm test -- unit e2e`
const want = (stage) => only.length === 0 || only.includes(stage);

const stages = [];
function run(name, cmd, args, env = {}) {
  const started = Date.now();
  process.stdout.write(`\n=== ${name} ===\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  const seconds = (Date.now() - started) / 1000;
  stages.push({ name, seconds, status: r.status ?? 1 });
  return r.status ?? 1;
}

function vitestCounts(file) {
  if (!existsSync(file)) return { passed: 0, failed: 1 };
  const j = JSON.parse(readFileSync(file, "utf8"));
  const failedSuites = (j.testResults ?? []).filter((t) => t.status === "failed" && (t.assertionResults ?? []).length === 0).length;
  return { passed: j.numPassedTests ?? 0, failed: (j.numFailedTests ?? 0) + failedSuites, skipped: (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0) };
}

function playwrightCounts(file) {
  if (!existsSync(file)) return { passed: 0, failed: 1 };
  const s = JSON.parse(readFileSync(file, "utf8")).stats ?? {};
  return { passed: s.expected ?? 0, failed: (s.unexpected ?? 0) + (s.flaky ?? 0), skipped: s.skipped ?? 0 };
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const add = (c) => {
  totals.passed += c.passed;
  totals.failed += c.failed;
  totals.skipped += c.skipped ?? 0;
};

for (const project of ["unit", "integration", "integration-pg"]) {
  if (!want(project)) continue;
  const out = join(results, `${project}.json`);
  const status = run(project, bin("vitest"), ["run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile.json=${out}`]);
  const c = vitestCounts(out);
  if (status !== 0 && c.failed === 0) c.failed = 1; // a crash with no failing test is still a failure
  add(c);
}

if (want("e2e")) {
  const build = run("build dashboard", bin("vite"), ["build", "--logLevel", "warn"]);
  if (build !== 0) add({ passed: 0, failed: 1 });
  else {
    const out = join(results, "e2e.json");
    const status = run("e2e", bin("playwright"), ["test"], { PLAYWRIGHT_JSON_OUTPUT_NAME: out });
    const c = playwrightCounts(out);
    if (status !== 0 && c.failed === 0) c.failed = 1;
    add(c);
  }
}

process.stdout.write("\nStage durations:\n");
for (const s of stages) process.stdout.write(`  ${s.name.padEnd(16)} ${s.seconds.toFixed(1).padStart(7)} s  ${s.status === 0 ? "ok" : "FAILED"}\n`);
const summary = `${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`;
writeFileSync(join(results, "summary.txt"), `${summary}\n`);
process.stdout.write(`\n${summary}\n`);
process.exit(totals.failed > 0 ? 1 : 0);
