import { describe, expect, it } from "vitest";
import { loadConfig, secretsOf } from "./config";

const KEY = "k".repeat(40);

describe("SWITCHYARD_DATABASE_URL", () => {
  it("switches to PostgreSQL only with the cluster's secret key, naming both variables", () => {
    expect(() => loadConfig({ SWITCHYARD_DATABASE_URL: "postgres://u:pw@db:5432/yard" })).toThrow(
      /SWITCHYARD_SECRET_KEY: required with SWITCHYARD_DATABASE_URL/,
    );
    const config = loadConfig({ SWITCHYARD_DATABASE_URL: "postgres://u:pw@db:5432/yard", SWITCHYARD_SECRET_KEY: KEY });
    expect(config.databaseUrl).toBe("postgres://u:pw@db:5432/yard");
  });

  it("refuses a URL that is not postgres://, without echoing it", () => {
    let message = "";
    try {
      loadConfig({ SWITCHYARD_DATABASE_URL: "mysql://u:hunter22@db/yard", SWITCHYARD_SECRET_KEY: KEY });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("SWITCHYARD_DATABASE_URL: must be a postgres:// URL");
    expect(message).not.toContain("hunter22");
  });

  it("is a secret (the whole URL and its decoded password): the redactor removes both from logs", () => {
    const config = loadConfig({ SWITCHYARD_DATABASE_URL: "postgres://u:p%40ss-word@db:5432/yard", SWITCHYARD_SECRET_KEY: KEY });
    expect(secretsOf(config)).toEqual(expect.arrayContaining(["postgres://u:p%40ss-word@db:5432/yard", "p@ss-word", KEY]));
  });

  it("is unset by default: the SQLite file in the data dir", () => {
    const config = loadConfig({ SWITCHYARD_HOME: "/tmp/yard-home" });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dbPath).toBe("/tmp/yard-home/switchyard.db");
  });
});

describe("SWITCHYARD_RETENTION_*", () => {
  it("is off by default: nothing is pruned", () => {
    const config = loadConfig({});
    expect([config.retentionDays, config.retentionMaxEvents, config.retentionMaxOutputMb]).toEqual([undefined, undefined, undefined]);
  });

  it("reads days, an event count and megabytes of agent output", () => {
    const config = loadConfig({ SWITCHYARD_RETENTION_DAYS: "30", SWITCHYARD_RETENTION_MAX_EVENTS: "1000000", SWITCHYARD_RETENTION_MAX_OUTPUT_MB: "512.5" });
    expect([config.retentionDays, config.retentionMaxEvents, config.retentionMaxOutputMb]).toEqual([30, 1_000_000, 512.5]);
  });

  it("names the variable and what it expects on a bad value", () => {
    expect(() => loadConfig({ SWITCHYARD_RETENTION_DAYS: "a month" })).toThrow(/SWITCHYARD_RETENTION_DAYS: expected a number of days, e\.g\. 30/);
    expect(() => loadConfig({ SWITCHYARD_RETENTION_DAYS: "0" })).toThrow(/SWITCHYARD_RETENTION_DAYS: expected a number of days above 0/);
    expect(() => loadConfig({ SWITCHYARD_RETENTION_MAX_EVENTS: "1e3.5" })).toThrow(/SWITCHYARD_RETENTION_MAX_EVENTS: expected a whole number of events/);
    expect(() => loadConfig({ SWITCHYARD_RETENTION_MAX_EVENTS: "0" })).toThrow(/SWITCHYARD_RETENTION_MAX_EVENTS: expected at least 1 event/);
    expect(() => loadConfig({ SWITCHYARD_RETENTION_MAX_OUTPUT_MB: "-5" })).toThrow(/SWITCHYARD_RETENTION_MAX_OUTPUT_MB: expected a number of megabytes above 0/);
  });
});
