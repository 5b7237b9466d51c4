import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, routeModelWarnings } from "./log";

afterEach(() => {
  delete (globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS;
  vi.restoreAllMocks();
});

describe("model warnings", () => {
  it("go to the log, not the console: warn the first time, debug after", () => {
    const lines: Array<{ level: number; msg: string; model?: string }> = [];
    const log = createLogger({ level: "debug", redact: (t) => t, stream: { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) } });
    const consoleWarn = vi.spyOn(console, "warn");
    routeModelWarnings(log);
    const emit = (globalThis as { AI_SDK_LOG_WARNINGS?: (o: unknown) => void }).AI_SDK_LOG_WARNINGS!;
    const warning = { type: "compatibility", feature: "maxOutputTokens" };
    emit({ warnings: [warning], provider: "anthropic.messages", model: "claude-x" });
    emit({ warnings: [warning], provider: "anthropic.messages", model: "claude-x" });
    expect(lines.map((l) => [l.level, l.msg, l.model])).toEqual([
      [40, "model warning", "claude-x"],
      [20, "model warning", "claude-x"],
    ]);
    expect(consoleWarn).not.toHaveBeenCalled();
  });
});
