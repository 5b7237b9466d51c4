import { defineConfig, devices } from "@playwright/test";

/**
 * End-to-end: the real server (`yard start --build-if-needed`, fresh temp home, random port) and
 * the built dashboard in Debian's Chromium (`apt install chromium`); no browser downloads.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/e2e",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  // one at a time in CI: each test runs a server and a browser, and CI has two cores
  workers: process.env.CI ? 1 : 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  use: {
    ...devices["Desktop Chrome"],
    viewport: { width: 1440, height: 900 },
    headless: true,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update"],
    },
  },
  projects: [{ name: "chromium" }],
});
