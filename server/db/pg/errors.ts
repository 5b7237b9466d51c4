import type { DatabaseErrorCode } from "../../../shared/errors";
import { DomainError } from "../../errors";

/** Stable codes of the store (the database domain of shared/errors.ts). */
export type PgStoreErrorCode = DatabaseErrorCode;

/** The variable that holds the database URL: every message about the connection names it. */
export const DATABASE_URL_VAR = "SWITCHYARD_DATABASE_URL";

/** SWITCHYARD_DATABASE_URL is not a postgres:// URL. */
export class DatabaseUrlInvalid extends DomainError<"DB_URL_INVALID"> {
  constructor(message: string) {
    super("DB_URL_INVALID", message, { kind: "INTERNAL_SERVER_ERROR" });
    this.name = "DatabaseUrlInvalid";
  }
}

/** The server cannot connect (refused, timed out, authentication, missing database). */
export class DatabaseUnreachable extends DomainError<"DB_UNREACHABLE"> {
  constructor(message: string, details: { target: string; reason: string }) {
    super("DB_UNREACHABLE", message, { kind: "INTERNAL_SERVER_ERROR", details });
    this.name = "DatabaseUnreachable";
  }
}

/** The database holds migrations this build does not know: it was set up by a newer Switchyard. */
export class DatabaseSchemaNewer extends DomainError<"DB_SCHEMA_NEWER"> {
  constructor(message: string, details: { unknown: Array<{ createdAt: number; hash: string }>; latestKnown: number }) {
    super("DB_SCHEMA_NEWER", message, { kind: "PRECONDITION_FAILED", details });
    this.name = "DatabaseSchemaNewer";
  }
}

/** `copySqliteToPostgres` into a database that already holds rows. */
export class CopyTargetNotEmpty extends DomainError<"DB_COPY_TARGET_NOT_EMPTY"> {
  constructor(message: string, details: { rows: Record<string, number> }) {
    super("DB_COPY_TARGET_NOT_EMPTY", message, { kind: "CONFLICT", details });
    this.name = "CopyTargetNotEmpty";
  }
}

/** The SQLite store's tables do not match this build's (an older or newer Switchyard wrote it). */
export class CopySourceMismatch extends DomainError<"DB_COPY_SOURCE_MISMATCH"> {
  constructor(message: string, details: { problems: string[] }) {
    super("DB_COPY_SOURCE_MISMATCH", message, { kind: "PRECONDITION_FAILED", details });
    this.name = "CopySourceMismatch";
  }
}

/** What postgres.js and Node say when the connection to the database is gone or refused. */
const CONNECTION_LOST = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // admin_shutdown, crash_shutdown, cannot_connect_now (the server restarts)
  "57P01",
  "57P02",
  "57P03",
]);

/**
 * A request met a database that is down or restarting (anywhere in the error's cause chain):
 * DB_UNAVAILABLE (HTTP 503) saying nothing was done and to try again; the pool reconnects by
 * itself once the database is back, no restart of the server needed.
 */
export function databaseUnavailable(err: unknown): DomainError<"DB_UNAVAILABLE"> | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 6; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string" && CONNECTION_LOST.has(e.code)) {
      return new DomainError("DB_UNAVAILABLE", `The database is unavailable (${e.code}): the request was not carried out. Try again in a moment; the server reconnects by itself when the database (${DATABASE_URL_VAR}) is back.`, {
        kind: "SERVICE_UNAVAILABLE",
        cause: err,
      });
    }
  }
  return undefined;
}

/**
 * postgres.js 3.4.9 (the newest) writes to a connection PostgreSQL closed inside a transaction (a
 * server paused past `idle_in_transaction_session_timeout`, a terminated backend) from a
 * setImmediate, where nothing can catch it (porsager/postgres#1208, fixes not released): the
 * process dies. Its connection state is corrupt by then, so it must not go on; this says why.
 */
export function isDeadConnectionWrite(err: unknown): boolean {
  return err instanceof TypeError && err.message.includes("reading 'write'") && /postgres[\\/]src[\\/]connection\.js/.test(err.stack ?? "");
}

export const DEAD_CONNECTION_EXIT =
  "PostgreSQL closed a connection of this server inside a transaction (was the server paused, or its session ended?), and the driver cannot go on from there (postgres.js issue #1208): exiting. " +
  "Start it again: what it owned was taken over by the other servers, and nothing acknowledged is lost.";
