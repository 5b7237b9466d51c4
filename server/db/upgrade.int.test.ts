import Database from "better-sqlite3";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../paths";
import { spawnServer } from "../testing/server-harness";
import { closeDb, openDb, SchemaNewerError } from "./client";

/** A data dir across versions: an older one's store migrates at start; a newer one's is refused. */
const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const MIGRATIONS = join(REPO_ROOT, "drizzle");
const journal = JSON.parse(readFileSync(join(MIGRATIONS, "meta", "_journal.json"), "utf8")) as { entries: Array<{ idx: number; tag: string; when: number }> };

/** The migrations folder as an older build had it: its first `n` migrations. */
function olderMigrations(n: number): string {
  const dir = temp("switchyard-old-migrations-");
  cpSync(MIGRATIONS, dir, { recursive: true });
  writeFileSync(join(dir, "meta", "_journal.json"), JSON.stringify({ ...journal, entries: journal.entries.slice(0, n) }));
  return dir;
}

describe("the store across versions", () => {
  it("a store an older version made migrates on open and keeps its rows", () => {
    const home = temp("switchyard-upgrade-");
    const path = join(home, "switchyard.db");
    const old = openDb({ path, migrationsDir: olderMigrations(journal.entries.length - 3) });
    old.$client.prepare("INSERT INTO events (id, ts, type, payload) VALUES (1, 0, 'system.noted', ?)").run(JSON.stringify({ message: "from the old version" }));
    closeDb(old);
    const now = openDb({ path, migrationsDir: MIGRATIONS });
    try {
      expect(now.$client.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: journal.entries.length });
      expect(now.$client.prepare("SELECT payload FROM events WHERE id = 1").get()).toEqual({ payload: '{"message":"from the old version"}' });
      // the newest migration's column is there
      expect((now.$client.prepare("PRAGMA table_info(agents)").all() as Array<{ name: string }>).map((c) => c.name)).toContain("parent_agent_id");
    } finally {
      closeDb(now);
    }
  });

  it("an older version refuses a store a newer one made, naming what to do, and changes nothing; yard start exits 2 with it", async () => {
    const home = temp("switchyard-newer-");
    const path = join(home, "switchyard.db");
    closeDb(openDb({ path, migrationsDir: MIGRATIONS }));
    const future = Date.UTC(2031, 0, 1);
    const raw = new Database(path);
    raw.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-a-newer-switchyard', ?)").run(future);
    raw.close();
    let err: unknown;
    try {
      openDb({ path, migrationsDir: MIGRATIONS });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SchemaNewerError);
    expect((err as Error).message).toMatch(/set up by a newer Switchyard .*2031-01-01.*Upgrade Switchyard/);
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: journal.entries.length + 1 });
    check.close();
    const server = spawnServer({ home, timeoutMs: 20_000 });
    await expect(server).rejects.toThrow(/exited with 2[\s\S]*set up by a newer Switchyard/);
  });
});
