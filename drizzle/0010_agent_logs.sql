CREATE TABLE `agent_logs` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL
);
