import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { openPg } from "./client";
import { DatabaseUnreachable, DatabaseUrlInvalid } from "./errors";
import { redactDatabaseUrl, scrubPassword } from "./url";

/** Opening PostgreSQL without one: fails fast, names the variable, never shows the password. */

const PASSWORD = "S3cret-p@ss/word";
const ENCODED = encodeURIComponent(PASSWORD);

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function leaks(err: unknown): string[] {
  const e = err as Error & { details?: unknown };
  const texts = [e.message, String(e.stack), JSON.stringify(e.details ?? null), String(e)];
  return texts.filter((t) => t.includes(PASSWORD) || t.includes(ENCODED) || t.includes("S3cret"));
}

describe("openPg without a database", () => {
  it("an unreachable database fails fast with DB_UNREACHABLE naming SWITCHYARD_DATABASE_URL, without the password", async () => {
    const port = await closedPort();
    const url = `postgres://switchyard:${ENCODED}@127.0.0.1:${port}/switchyard`;
    const started = performance.now();
    const err = await openPg({ url }).catch((e: unknown) => e);
    const ms = performance.now() - started;
    expect(err).toBeInstanceOf(DatabaseUnreachable);
    expect(err).toMatchObject({ code: "DB_UNREACHABLE" });
    const message = (err as Error).message;
    expect(message).toContain("SWITCHYARD_DATABASE_URL");
    expect(message).toContain(`postgres://switchyard:***@127.0.0.1:${port}/switchyard`);
    expect(message).toMatch(/ECONNREFUSED/);
    expect(leaks(err)).toEqual([]);
    expect(ms).toBeLessThan(3000);
  });

  it("a URL that is not postgres:// is refused naming the variable, without echoing it", async () => {
    const err = await openPg({ url: `mysql://root:${ENCODED}@db/app` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUrlInvalid);
    expect((err as Error).message).toMatch(/^SWITCHYARD_DATABASE_URL must start with postgres:\/\//);
    expect(leaks(err)).toEqual([]);
    const garbage = await openPg({ url: `not a url ${PASSWORD}` }).catch((e: unknown) => e);
    expect(garbage).toMatchObject({ code: "DB_URL_INVALID" });
    expect(leaks(garbage)).toEqual([]);
  });

  it("redacts the password in URLs and scrubs it, raw or percent-encoded, from any text", () => {
    const url = `postgresql://me:${ENCODED}@db.example:6543/yard?sslmode=require`;
    expect(redactDatabaseUrl(url)).toBe("postgresql://me:***@db.example:6543/yard");
    expect(scrubPassword(`failed for ${url}: password ${PASSWORD} / ${ENCODED}`, url)).toBe("failed for postgresql://me:***@db.example:6543/yard: password *** / ***");
    expect(redactDatabaseUrl("postgres://me@db/yard")).toBe("postgres://me@db/yard");
  });
});

describe("a connection PostgreSQL closed inside a transaction (postgres.js #1208)", () => {
  it("is told apart from other errors by the driver's frame, to say why the server exits", async () => {
    const { isDeadConnectionWrite } = await import("./errors");
    const crash = new TypeError("Cannot read properties of null (reading 'write')");
    crash.stack = `${crash.message}\n    at Immediate.nextWrite (file:///srv/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)`;
    expect(isDeadConnectionWrite(crash)).toBe(true);
    const ours = new TypeError("Cannot read properties of null (reading 'write')");
    ours.stack = `${ours.message}\n    at flush (file:///srv/server/agents/log-store.ts:10:1)`;
    expect(isDeadConnectionWrite(ours)).toBe(false);
    expect(isDeadConnectionWrite(new Error("Cannot read properties of null (reading 'write') postgres/src/connection.js"))).toBe(false);
  });
});

describe("a lost connection, as a transaction body sees it", () => {
  it("is postgres.js's close, the socket's reset, or PostgreSQL ending the session; not a query's own error", async () => {
    const { isConnectionLoss } = await import("./connection-loss");
    for (const code of ["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "ECONNRESET", "57P01", "57P02"]) expect(isConnectionLoss(Object.assign(new Error(code), { code }))).toBe(true);
    // the session ended for idling in a transaction: FATAL
    expect(isConnectionLoss(Object.assign(new Error("idle"), { code: "25P03", severity: "FATAL" }))).toBe(true);
    for (const code of ["23505", "40001", "LEASE_LOST", "25P02"]) expect(isConnectionLoss(Object.assign(new Error(code), { code, severity: "ERROR" }))).toBe(false);
    expect(isConnectionLoss(new Error("no code"))).toBe(false);
    expect(isConnectionLoss(null)).toBe(false);
  });
});
