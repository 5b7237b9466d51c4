import { describe, expect, it } from "vitest";
import type { WorkerInfo } from "../../../shared/workers";
import { formatAgo, parseLabels, placeableWorkers, providerLabel, serverLabel, workerCommand } from "./worker-format";

describe("worker-format", () => {
  it("says how long ago a worker was heard of, to the second", () => {
    const now = Date.parse("2025-01-01T12:00:00.000Z");
    expect(formatAgo("2025-01-01T11:59:59.600Z", now)).toBe("just now");
    expect(formatAgo("2025-01-01T11:59:57.000Z", now)).toBe("3s ago");
    expect(formatAgo("2025-01-01T11:55:00.000Z", now)).toBe("5m ago");
    expect(formatAgo("2025-01-01T09:00:00.000Z", now)).toBe("3h ago");
    // a clock a little ahead of the browser's is "just now", not negative
    expect(formatAgo("2025-01-01T12:00:02.000Z", now)).toBe("just now");
  });

  it("builds the worker's command line from the server's URL and the token", () => {
    expect(workerCommand("http://10.0.0.1:7422", "syw.build-2.abc")).toBe("yard worker --server http://10.0.0.1:7422 --token syw.build-2.abc");
  });

  it("names a CLI with its short version", () => {
    expect(providerLabel({ name: "claude", command: "claude", version: "2.1.3 (Claude Code)" })).toBe("claude 2.1.3");
    expect(providerLabel({ name: "codex", command: "codex", version: "codex-cli 0.5.0" })).toBe("codex 0.5.0");
    expect(providerLabel({ name: "fake", command: "node", version: "fake agent" })).toBe("fake fake agent");
    expect(providerLabel({ name: "gemini", command: "gemini", version: null })).toBe("gemini (no --version)");
  });

  it("shows a server by its host", () => {
    expect(serverLabel("http://127.0.0.1:7422/")).toBe("127.0.0.1:7422");
    expect(serverLabel("not a url")).toBe("not a url");
  });

  it("parses labels typed with commas or spaces", () => {
    expect(parseLabels(" gpu, big-disk  gpu,,")).toEqual(["gpu", "big-disk"]);
    expect(parseLabels("")).toEqual([]);
  });

  it("offers connected workers only", () => {
    const w = (name: string, state: WorkerInfo["state"]) => ({ name, state }) as WorkerInfo;
    expect(placeableWorkers([w("a", "connected"), w("b", "lost"), w("c", "new"), w("d", "connected")]).map((x) => x.name)).toEqual(["a", "d"]);
  });
});
