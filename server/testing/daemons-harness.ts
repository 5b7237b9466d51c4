import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { Db } from "../db/client";
import { openSqliteStore, type SqliteStore } from "../db/sqlite-store";
import { EventBus } from "../events/bus";
import type { EventStore } from "../events/event-store";
import { createLogger } from "../log";
import { createMockModel } from "../models/mock";
import { scriptInputFromCall } from "../models/prompt-input";
import { DaemonsService } from "../daemons/daemons.service";

/**
 * Test support for daemons: an in-memory SQLite store, a real bus, and the mock/echo model with a recorder
 * at the model boundary (the last user message of every call). A message starting with "SLOW"
 * streams slowly (about 1 s), so a test can stop a daemon mid-turn; one starting with "FAIL" makes
 * the model call fail.
 */

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");

export type DaemonHarness = {
  home: string;
  store: SqliteStore;
  /** The store's SQLite connection (tests poke the tables directly). */
  db: Db;
  bus: EventBus<EventStore>;
  service: DaemonsService;
  /** Last user text of every model call, in order. */
  calls: string[];
  newService(): DaemonsService;
  /** Stop every service's daemons, close the bus and DB, remove the home. */
  close(): Promise<void>;
};

export function recordingModel(calls: string[]): LanguageModelV3 {
  const fast = createMockModel("echo", { deltaDelayMs: 0 });
  const slow = createMockModel("echo", { deltaDelayMs: 10 });
  return {
    specificationVersion: "v3",
    provider: "mock",
    modelId: "echo",
    supportedUrls: {},
    doGenerate: (call) => fast.doGenerate(call),
    doStream: (call) => {
      const text = scriptInputFromCall(call).lastUserText;
      calls.push(text);
      if (text.startsWith("FAIL")) return Promise.reject(new Error(`model refused: ${text}`));
      return (text.startsWith("SLOW") ? slow : fast).doStream(call);
    },
  };
}

export function daemonHarness(options: { allowedRoots?: string[] } = {}): DaemonHarness {
  const home = mkdtempSync(join(tmpdir(), "switchyard-daemons-"));
  const store = openSqliteStore({ path: ":memory:", migrationsDir });
  const db = store.db;
  const bus = new EventBus(store.events);
  const calls: string[] = [];
  const model = recordingModel(calls);
  const log = createLogger({ level: "silent", redact: (s) => s });
  const services: DaemonsService[] = [];
  const newService = () => {
    const service = new DaemonsService({ store, bus, log, home, allowedRoots: options.allowedRoots ?? [], resolveModel: () => ({ model }) });
    services.push(service);
    return service;
  };
  const service = newService();
  return {
    home,
    store,
    db,
    bus,
    service,
    calls,
    newService,
    async close() {
      await Promise.all(services.map((s) => s.shutdown()));
      bus.close();
      await store.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Poll until `check` holds (or fail after timeoutMs). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
