/** Every drizzle table of the server, for drizzle-kit and the typed client. */
export * from "../events/events.sql";
export * from "../runs/runs.sql";
export * from "../daemons/daemons.sql";
export * from "../agents/agents.sql";
export * from "../conversations/conversations.sql";
export * from "../accounts/accounts.sql";
export * from "../cluster/cluster.sql";
export * from "../workers/workers.sql";
