import { bigint, doublePrecision, index, integer, pgTable, text } from "drizzle-orm/pg-core";

/** One row per strategy run (twin of server/runs/runs.sql.ts). */
export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    cwd: text("cwd").notNull(),
    strategyName: text("strategy_name").notNull(),
    strategyPath: text("strategy_path").notNull(),
    status: text("status", { enum: ["pending", "running", "completed", "error", "cancelled"] }).notNull(),
    segment: integer("segment").notNull(),
    startedAt: bigint("started_at", { mode: "number" }).notNull(),
    completedAt: bigint("completed_at", { mode: "number" }),
    modelOverride: text("model_override"),
    manifestPath: text("manifest_path"),
    input: text("input"),
    result: text("result"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    promptTokens: bigint("prompt_tokens", { mode: "number" }).notNull().default(0),
    completionTokens: bigint("completion_tokens", { mode: "number" }).notNull().default(0),
    /** SQLite REAL is an 8-byte float: double precision, not real, so a copy is exact. */
    costUsd: doublePrecision("cost_usd"),
  },
  (t) => [index("runs_cwd_idx").on(t.cwd, t.startedAt), index("runs_status_idx").on(t.status), index("runs_started_idx").on(t.startedAt)],
);

/** A prepared run not started yet (twin of server/runs/runs.sql.ts). */
export const preparedRuns = pgTable("prepared_runs", {
  runId: text("run_id").primaryKey(),
  input: text("input").notNull(),
  serverId: text("server_id").notNull(),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
});
