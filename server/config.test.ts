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
