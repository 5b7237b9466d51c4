import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per strategy run: a projection of its latest segment for listing. The timeline itself
 * (every event of every segment) lives in the event store under scope runId.
 */
export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    cwd: text("cwd").notNull(),
    strategyName: text("strategy_name").notNull(),
    strategyPath: text("strategy_path").notNull(),
    status: text("status", { enum: ["pending", "running", "completed", "error", "cancelled"] }).notNull(),
    segment: integer("segment").notNull(),
    startedAt: integer("started_at").notNull(),
    completedAt: integer("completed_at"),
    modelOverride: text("model_override"),
    manifestPath: text("manifest_path"),
    /** The latest segment's input. */
    input: text("input"),
    result: text("result"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    promptTokens: integer("prompt_tokens").notNull().default(0),
    completionTokens: integer("completion_tokens").notNull().default(0),
    /** USD of the latest segment (CLI agents' own cost, else the price table). */
    costUsd: real("cost_usd"),
  },
  (t) => [index("runs_cwd_idx").on(t.cwd, t.startedAt), index("runs_status_idx").on(t.status), index("runs_started_idx").on(t.startedAt)],
);

/**
 * A prepared run not started yet (prepare_run), so `start_run` may reach any server of the
 * database: what prepare was given (the strategy is loaded again where it starts). Deleted when
 * the run starts or is let go; a prepared run nobody starts is pruned after a day.
 */
export const preparedRuns = sqliteTable("prepared_runs", {
  runId: text("run_id").primaryKey(),
  /** JSON of the PrepareInput (strategy path resolved, cwd, model override, manifest, budget). */
  input: text("input").notNull(),
  serverId: text("server_id").notNull(),
  createdAt: integer("created_at").notNull(),
});
