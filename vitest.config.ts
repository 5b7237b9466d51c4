import { defineConfig } from "vitest/config";

const integration = {
  include: ["server/**/*.int.test.ts"],
  environment: "node" as const,
  testTimeout: 120_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
  // one file at a time: several tests measure rates or kill servers at random moments,
  // and two cores shared by parallel files make those checks depend on the neighbours
  fileParallelism: false,
};

/**
 * The integration files that are about SQLite itself, or open no store: they run once, in
 * `integration`. Every other integration file runs on both stores.
 */
export const SQLITE_ONLY = [
  // the SQLite file itself: WAL, checkpoints, kill -9 of the file's writer, upgrades of a data dir
  "server/events/durability.int.test.ts",
  "server/db/upgrade.int.test.ts",
  // the SQLite -> PostgreSQL copy and the PostgreSQL harness: both stores already, by design
  "server/db/pg/**",
  // several servers on one PostgreSQL database of its own (SQLite has one server by design)
  "server/cluster/servers.int.test.ts",
  "server/cli/yard-db.int.test.ts",
  // files that run their cases on both stores themselves (describe.each(STORE_KINDS))
  "server/**/*-store.int.test.ts",
  "server/db/store.int.test.ts",
  "server/db/retention.int.test.ts",
  "server/cli/yard-db-prune.int.test.ts",
  "server/events/pg-events.int.test.ts",
  // the npm package and the bundle, the git endpoint on a bare Fastify app: no store of their own
  "server/package/**",
  "server/git-http/**",
  "server/bench/**",
  // workers in network namespaces: about the network and the disks between machines, not the
  // store (workers.int.test.ts runs the workers domain on both), and a minute and more each run
  "server/workers/workers-netns.int.test.ts",
];

/**
 * Three projects: `unit` (fast, in-process: `*.test.ts` beside the code), `integration`
 * (`*.int.test.ts`: the real server factory on a random loopback port, child processes, real
 * SQLite) and `integration-pg` (the same files on PostgreSQL: SWITCHYARD_TEST_STORE=postgres puts
 * every server the harness starts on a database of its own). Playwright e2e lives in e2e/.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["shared/**/*.test.ts", "server/**/*.test.ts", "web/**/*.test.ts", "web/**/*.test.tsx"],
          exclude: ["**/*.int.test.ts", "node_modules/**"],
          environment: "node",
          testTimeout: 20_000,
        },
      },
      { test: { name: "integration", ...integration } },
      {
        test: {
          name: "integration-pg",
          ...integration,
          exclude: ["node_modules/**", ...SQLITE_ONLY],
          env: { SWITCHYARD_TEST_STORE: "postgres" },
        },
      },
    ],
  },
});
