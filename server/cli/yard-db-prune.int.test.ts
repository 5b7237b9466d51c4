import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { openPgStore } from "../db/pg/pg-store";
import { openSqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";
import { REPO_ROOT } from "../paths";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { buildWorld, tableCounts } from "../testing/retention-world";
import { STORE_KINDS, type StoreKind } from "../testing/stores";
import { yard } from "../testing/cli-harness";

/** `yard db prune` through the CLI, on the store the server's environment names: the SQLite data dir, or SWITCHYARD_DATABASE_URL. */
const dirs: string[] = [];
let pg: TestDatabase | undefined;
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await pg?.drop();
});

/** A store holding the retention world, closed; the env that names it, and a way to reopen it. */
async function storeWith(kind: StoreKind) {
  const home = mkdtempSync(join(tmpdir(), "switchyard-prune-"));
  dirs.push(home);
  let env: Record<string, string> = { SWITCHYARD_HOME: home };
  let open: () => Promise<Store> = async () => openSqliteStore({ path: join(home, "switchyard.db"), migrationsDir: join(REPO_ROOT, "drizzle") });
  if (kind === "postgres") {
    pg ??= await createTestDatabase();
    const url = pg.url.replace("postgres://postgres@", "postgres://postgres:hunter22@");
    env = { ...env, SWITCHYARD_DATABASE_URL: url, SWITCHYARD_SECRET_KEY: "k".repeat(40) };
    open = () => openPgStore({ url: pg!.url, max: 2 });
  }
  const store = await open();
  if (kind === "postgres") await emptyPg(pg!.url);
  const bus = await new EventBus(store.events).open();
  const world = await buildWorld(store, bus);
  bus.close();
  await store.close();
  const counts = async () => {
    const s = await open();
    try {
      return await tableCounts(s);
    } finally {
      await s.close();
    }
  };
  return { env, world, counts };
}

describe.each(STORE_KINDS)("yard db prune on %s", (kind) => {
  it("--dry-run --json counts what would go and removes nothing; the real run removes exactly that; a second run finds nothing", async () => {
    const { env, world, counts } = await storeWith(kind);
    const before = await counts();
    const dry = await yard(["db", "prune", "--older-than", "30", "--dry-run", "--json"], { env });
    expect(dry.err).toBe("");
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.out) as { store: string; dryRun: boolean; events: number; runs: number; output: { agents: number; chunks: number; bytes: number } };
    expect(planned).toMatchObject({ dryRun: true, events: world.removedEvents, runs: world.removedRuns, output: world.removedOutput });
    expect(planned.store).not.toContain("hunter22");
    expect(await counts()).toEqual(before);

    const real = await yard(["db", "prune", "--older-than", "30"], { env });
    expect(real.err).toBe("");
    expect(real.code).toBe(0);
    expect(real.out).toContain(`events        ${world.removedEvents} (1 run whole, row and timeline)`);
    expect(real.out).toContain(`agent output  ${world.removedOutput.chunks} chunks`);
    expect(real.out).not.toContain("hunter22");
    const after = await counts();
    expect(before.events - after.events).toBe(world.removedEvents);
    expect(before.chunks - after.chunks).toBe(world.removedOutput.chunks);

    const again = await yard(["db", "prune", "--older-than", "30", "--json"], { env });
    expect(JSON.parse(again.out)).toMatchObject({ events: 0, runs: 0, output: { chunks: 0 } });
  });

  it("takes its limits from SWITCHYARD_RETENTION_* when no option is given, and refuses to run with none", async () => {
    const { env, world } = await storeWith(kind);
    const none = await yard(["db", "prune"], { env });
    expect(none.code).toBe(1);
    expect(none.err).toContain("nothing to prune by");
    const configured = await yard(["db", "prune", "--dry-run", "--json"], { env: { ...env, SWITCHYARD_RETENTION_DAYS: "30" } });
    expect(configured.err).toBe("");
    expect(JSON.parse(configured.out)).toMatchObject({ dryRun: true, events: world.removedEvents, limits: { olderThanDays: 30 } });
    const bad = await yard(["db", "prune", "--older-than", "soon"], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain("expected a number");
  });
});

describe("yard db prune without a store", () => {
  it("names the data dir it looked in", async () => {
    const r = await yard(["db", "prune", "--older-than", "30"], { env: { SWITCHYARD_HOME: "/nowhere/home" } });
    expect(r.code).toBe(1);
    expect(r.err).toContain("no SQLite store at /nowhere/home/switchyard.db");
  });
});

/** The file's one database, emptied for the next case (the migrations' bookkeeping kept). */
async function emptyPg(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<Array<{ name: string }>>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`;
    await sql.unsafe(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")} RESTART IDENTITY`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
