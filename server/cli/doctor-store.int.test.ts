import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPgStore } from "../db/pg/pg-store";
import { openSqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { REPO_ROOT } from "../paths";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { STORE_KINDS, type StoreKind } from "../testing/stores";
import { yard } from "../testing/cli-harness";
import type { DoctorReport } from "./doctor";

/**
 * `yard doctor`'s database check on the store the environment names: the SQLite file in the data
 * dir, or PostgreSQL at SWITCHYARD_DATABASE_URL (reachable or not, its password never shown), with
 * the registered accounts counted from that store when no server answers.
 */
const PASSWORD = "s3cret-Pa55word";
const dirs: string[] = [];
let pg: TestDatabase | undefined;
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await pg?.drop();
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, "127.0.0.1", res));
  const address = s.address();
  await new Promise((res) => s.close(res));
  return typeof address === "object" && address ? address.port : 0;
}

/** The doctor's environment: a temp HOME and data dir, a port no server holds, PATH as it is (git). */
async function baseEnv(): Promise<Record<string, string>> {
  const home = mkdtempSync(join(tmpdir(), "switchyard-doctor-store-"));
  dirs.push(home);
  return { PATH: process.env.PATH ?? "", HOME: home, SWITCHYARD_HOME: join(home, "data"), SWITCHYARD_PORT: String(await freePort()), GIT_CONFIG_NOSYSTEM: "1" };
}

/** With the password in it: the database runs with trust authentication, so any password connects. */
const withPassword = (url: string) => url.replace("postgres://postgres@", `postgres://postgres:${PASSWORD}@`);

/** A store of `kind` holding two usable claude accounts, an invalid one and a codex one; the env that names it. */
async function storeWithAccounts(kind: StoreKind): Promise<{ env: Record<string, string>; shown: string }> {
  const env = await baseEnv();
  let store: Store;
  let shown: string;
  if (kind === "postgres") {
    pg ??= await createTestDatabase();
    store = await openPgStore({ url: pg.url, max: 2 });
    env.SWITCHYARD_DATABASE_URL = withPassword(pg.url);
    env.SWITCHYARD_SECRET_KEY = "k".repeat(40);
    shown = withPassword(pg.url).replace(PASSWORD, "***");
  } else {
    const path = join(env.SWITCHYARD_HOME ?? "", "switchyard.db");
    store = openSqliteStore({ path, migrationsDir: join(REPO_ROOT, "drizzle") });
    shown = `SQLite ${path}`;
  }
  try {
    const now = Date.now();
    const account = (id: string, provider: string, invalidReason: string | null = null) => ({
      id,
      provider,
      label: id,
      kind: "api-key" as const,
      secret: "sealed",
      secretHint: "sk-…1234",
      configDir: join(env.HOME ?? "", id),
      invalidReason,
      createdAt: now,
      updatedAt: now,
    });
    await store.tx(async (tx) => {
      await tx.insert(store.t.accounts).values([account("c1", "claude"), account("c2", "claude"), account("c3", "claude", "revoked"), account("x1", "codex")]);
    });
  } finally {
    await store.close();
  }
  return { env, shown };
}

async function doctor(env: Record<string, string>) {
  const json = await yard(["doctor", "--json"], { env });
  const text = await yard(["doctor"], { env });
  return { code: json.code, report: JSON.parse(json.out) as DoctorReport, text: text.out, all: json.out + json.err + text.out + text.err };
}

const check = (r: DoctorReport, id: string) => r.checks.find((c) => c.id === id);

describe.each(STORE_KINDS)("yard doctor on %s", (kind) => {
  it("names the store, and counts the usable accounts in it when no server answers", async () => {
    const { env, shown } = await storeWithAccounts(kind);
    const { code, report, text, all } = await doctor(env);
    expect(code, all).toBe(0);
    expect(check(report, "database")).toMatchObject({ status: "ok", detail: expect.stringContaining(shown) });
    expect(text).toMatch(/^✓ database {9}/m);
    expect(check(report, "credentials-claude")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^2 accounts/) });
    expect(check(report, "credentials-codex")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^1 account\b/) });
    expect(all).not.toContain(PASSWORD);
  });
});

describe("yard doctor with SWITCHYARD_DATABASE_URL", () => {
  it("an empty database is reachable and set up at the first start", async () => {
    const empty = await createTestDatabase();
    try {
      const env = { ...(await baseEnv()), SWITCHYARD_DATABASE_URL: withPassword(empty.url), SWITCHYARD_SECRET_KEY: "k".repeat(40) };
      const { code, report, all } = await doctor(env);
      expect(code, all).toBe(0);
      expect(check(report, "database")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^PostgreSQL \S+ at postgres:\/\/postgres:\*\*\*@.*\(empty: the first yard start sets it up\)$/) });
      expect(all).not.toContain(PASSWORD);
    } finally {
      await empty.drop();
    }
  });

  it("an unreachable database fails naming the variable, with how to fix it and without the password; exit 1", async () => {
    const port = await freePort();
    const url = `postgres://switchyard:${PASSWORD}@127.0.0.1:${port}/switchyard`;
    const env = { ...(await baseEnv()), SWITCHYARD_DATABASE_URL: url, SWITCHYARD_SECRET_KEY: "k".repeat(40) };
    const { code, report, text, all } = await doctor(env);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(check(report, "database")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining(`cannot connect to PostgreSQL at postgres://switchyard:***@127.0.0.1:${port}/switchyard (SWITCHYARD_DATABASE_URL): `),
      fix: expect.stringContaining("SWITCHYARD_DATABASE_URL"),
    });
    expect(text).toMatch(/^✗ database {9}cannot connect/m);
    expect(all).not.toContain(PASSWORD);
  });
});
