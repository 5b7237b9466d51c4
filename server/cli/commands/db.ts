import { existsSync } from "node:fs";
import type { Command } from "commander";
import { examples, jsonOption, local, required, type Cli } from "./common";

export function registerDb(program: Command, cli: Cli): void {
  const db = program.command("db").description("the store: move a SQLite data dir to PostgreSQL");
  examples(db, "yard db copy --to postgres://switchyard@db.internal:5432/switchyard");
  const copy = local(db.command("copy"))
    .description("copy a SQLite store (every table; events keep their ids) into an empty PostgreSQL database; stop the server first: writes after the copy's snapshot are not copied")
    .addOption(required("--to <url>", "the PostgreSQL database: postgres://user:password@host:5432/db (empty; migrated first)"))
    .option("--from <file>", "the SQLite file (default: <SWITCHYARD_HOME>/switchyard.db)")
    .action(async (opts: { to: string; from?: string; json?: boolean }) => {
      const { loadConfig } = await import("../../config");
      const from = opts.from ?? loadConfig(cli.io.env).dbPath;
      if (!existsSync(from)) throw new Error(`no SQLite store at ${from}: pass --from <file> or set SWITCHYARD_HOME`);
      // loaded here, not with every command: the database drivers are only for this one
      const { copySqliteToPostgres } = await import("../../db/pg/copy");
      const { redactDatabaseUrl } = await import("../../db/pg/url");
      const counts = await copySqliteToPostgres({ sqlitePath: from, url: opts.to });
      if (opts.json) return cli.json({ from, to: redactDatabaseUrl(opts.to), tables: counts });
      const rows = Object.values(counts).reduce((a, b) => a + b, 0);
      cli.print(`Copied ${from} into ${redactDatabaseUrl(opts.to)}: ${rows} rows in ${Object.keys(counts).length} tables`);
      for (const [table, n] of Object.entries(counts)) cli.print(`  ${table.padEnd(22)} ${n}`);
    });
  jsonOption(copy);
  examples(copy, "yard db copy --to postgres://switchyard@db.internal:5432/switchyard", "yard db copy --from ~/old/switchyard.db --to postgres://localhost/switchyard --json");
}
