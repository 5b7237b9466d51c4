import { DomainError } from "../../errors";

/**
 * Stable codes of the PostgreSQL store. (They join the catalogue in shared/errors.ts when the
 * domains are switched over and these errors reach the API.)
 */
export type PgStoreErrorCode = "DB_URL_INVALID" | "DB_UNREACHABLE" | "DB_SCHEMA_NEWER" | "DB_COPY_TARGET_NOT_EMPTY" | "DB_COPY_SOURCE_MISMATCH";

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
