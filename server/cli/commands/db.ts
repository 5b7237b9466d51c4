import { existsSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { examples, jsonOption, local, required, wholeNumber, type Cli } from "./common";

export function registerDb(program: Command, cli: Cli): void {
  const db = program.command("db").description("the store: move a SQLite data dir to PostgreSQL, prune old events and agent output");
  examples(db, "yard db copy --to postgres://switchyard@db.internal:5432/switchyard", "yard db prune --older-than 30 --dry-run");
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
  registerDbPrune(db, cli);
}

/** A number of days or megabytes: 0 or more, decimals allowed. */
function amount(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number (0 or more)");
  return n;
}

type PruneFlags = { olderThan?: number; keepEvents?: number; maxOutputMb?: number; dryRun?: boolean; json?: boolean };

function registerDbPrune(db: Command, cli: Cli): void {
  const prune = local(db.command("prune"))
    .description(
      "remove old events and agent output now, as SWITCHYARD_RETENTION_* does hourly; never what a live run, agent or daemon needs (runs and agents' output go whole, the newest event stays); with the server's environment: the SQLite data dir, or SWITCHYARD_DATABASE_URL when set; safe while the server runs",
    )
    .option("--older-than <days>", "events and agent output older than this many days (default: SWITCHYARD_RETENTION_DAYS)", amount)
    .option("--keep-events <n>", "keep the newest n events, prune older ones (default: SWITCHYARD_RETENTION_MAX_EVENTS)", wholeNumber)
    .option("--max-output-mb <mb>", "keep the newest this many MB of agent output (default: SWITCHYARD_RETENTION_MAX_OUTPUT_MB)", amount)
    .option("--dry-run", "print what would be removed; remove nothing")
    .action(async (opts: PruneFlags) => {
      const { loadConfig } = await import("../../config");
      const config = loadConfig(cli.io.env);
      const olderThanDays = opts.olderThan ?? config.retentionDays;
      const keepEvents = opts.keepEvents ?? config.retentionMaxEvents;
      const maxOutputMb = opts.maxOutputMb ?? config.retentionMaxOutputMb;
      if (olderThanDays === undefined && keepEvents === undefined && maxOutputMb === undefined) {
        throw new Error("nothing to prune by: pass --older-than <days>, --keep-events <n> or --max-output-mb <mb> (or set SWITCHYARD_RETENTION_DAYS, SWITCHYARD_RETENTION_MAX_EVENTS, SWITCHYARD_RETENTION_MAX_OUTPUT_MB)");
      }
      if (!config.databaseUrl && !existsSync(config.dbPath)) throw new Error(`no SQLite store at ${config.dbPath}: set SWITCHYARD_HOME (or SWITCHYARD_DATABASE_URL)`);
      // loaded here, not with every command: the database drivers are only for the db commands
      const { openPgStore } = await import("../../db/pg/pg-store");
      const { openSqliteStore } = await import("../../db/sqlite-store");
      const { redactDatabaseUrl } = await import("../../db/pg/url");
      const { prune: pruneStore } = await import("../../db/retention");
      const where = config.databaseUrl ? redactDatabaseUrl(config.databaseUrl) : config.dbPath;
      const store = config.databaseUrl ? await openPgStore({ url: config.databaseUrl, max: 2 }) : openSqliteStore({ path: config.dbPath, migrationsDir: config.migrationsDir });
      const limits = { olderThanDays, keepEvents, maxOutputBytes: maxOutputMb === undefined ? undefined : Math.round(maxOutputMb * 1024 * 1024) };
      let report;
      try {
        report = await pruneStore(store, { ...limits, dryRun: !!opts.dryRun });
      } finally {
        await store.close();
      }
      const { events, runs, output } = report;
      if (opts.json) return cli.json({ store: where, dryRun: report.dryRun, limits: { olderThanDays, keepEvents, maxOutputMb }, events, runs, output, newestEventId: report.newestEventId });
      const size = (bytes: number) => (bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`);
      cli.print(`${report.dryRun ? "Would prune" : "Pruned"} ${where}:`);
      cli.print(`  events        ${events}${runs > 0 ? ` (${runs} run${runs === 1 ? "" : "s"} whole, row and timeline)` : ""}`);
      cli.print(`  agent output  ${output.chunks} chunks, ${size(output.bytes)}, of ${output.agents} agent${output.agents === 1 ? "" : "s"}`);
      if (report.dryRun) cli.print("Nothing was removed (--dry-run).");
    });
  jsonOption(prune);
  examples(prune, "yard db prune --older-than 30 --dry-run", "yard db prune --keep-events 1000000 --max-output-mb 2048 --json", "yard db prune --older-than 90 --keep-events 5000000");
}
