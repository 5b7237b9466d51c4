/**
 * Every table of the server as PostgreSQL tables (drizzle pg-core), twins of the SQLite tables
 * re-exported by ../schema.ts: same table, column and index names, same nullability and
 * defaults (schema-parity.test.ts holds them together). drizzle-kit generates drizzle-pg/ from
 * this file (`npm run db:generate:pg`).
 */
export * from "./events.sql";
export * from "./runs.sql";
export * from "./daemons.sql";
export * from "./agents.sql";
export * from "./conversations.sql";
export * from "./accounts.sql";
export * from "./cluster.sql";
export * from "./workers.sql";
