import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";

/** The CLI entry: prints {"url": ...} as one JSON line, serves, exits 0 on SIGTERM. */

const cli = new URL("./cli.ts", import.meta.url).pathname;

describe("fake model CLI", () => {
  it("prints its url, answers requests and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", cli, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
      const { url } = JSON.parse(line) as { url: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "SAY[from cli]" }] }) });
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe("from cli");
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      expect((await exited)[0]).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
