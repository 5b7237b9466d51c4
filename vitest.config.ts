import { defineConfig } from "vitest/config";

/**
 * Two projects: `unit` (fast, in-process: `*.test.ts` beside the code) and `integration`
 * (`*.int.test.ts`: the real server factory on a random loopback port, child processes, real
 * SQLite). Playwright e2e lives in e2e/ and runs separately.
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
      {
        test: {
          name: "integration",
          include: ["server/**/*.int.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 60_000,
          pool: "forks",
          // one file at a time: several tests measure rates or kill servers at random moments,
          // and two cores shared by parallel files make those checks depend on the neighbours
          fileParallelism: false,
        },
      },
    ],
  },
});
