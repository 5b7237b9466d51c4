/**
 * postgres.js 3.4.9 (the newest) crashes the process when a transaction's connection dies under
 * it (a PostgreSQL restart or failover, a terminated backend, a session ended for idling in a
 * transaction): the body's query fails, postgres.js then writes ROLLBACK to the closed connection
 * from a setImmediate, where nothing can catch it (porsager/postgres#1208; the fixes, #1168,
 * #1176 and #1209, are not released). Every transaction body of ours runs through
 * `untilConnectionLoss`: when its query failed because the connection is gone, the body never
 * settles, so postgres.js writes nothing more to it, and the transaction fails by itself with the
 * connection's close (postgres.js rejects `begin` on it), which is what the caller sees. What a
 * body that never settles keeps is one closure per lost connection.
 */

/** Codes of a connection that is gone or going: postgres.js's own, the socket's, and PostgreSQL's class 57 (operator intervention: shutdown, terminated). */
const GONE = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);

export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  if (typeof e?.code !== "string") return false;
  // a FATAL or PANIC error ends the session: PostgreSQL closes the connection after it
  return GONE.has(e.code) || e.code.startsWith("57P") || e.severity === "FATAL" || e.severity === "PANIC";
}

/** A transaction body that fails on a lost connection is held (never settles); any other outcome passes. */
export function untilConnectionLoss<T>(body: Promise<T>): Promise<T> {
  return body.catch((err: unknown) => {
    if (isConnectionLoss(err)) return new Promise<T>(() => {});
    throw err;
  });
}
