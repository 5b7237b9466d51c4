CREATE TABLE `agent_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`seq` integer NOT NULL,
	`text` text NOT NULL,
	`created_at` integer NOT NULL,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_messages_seq_idx` ON `agent_messages` (`agent_id`,`seq`);--> statement-breakpoint
CREATE INDEX `agent_messages_undelivered_idx` ON `agent_messages` (`agent_id`,`delivered_at`);--> statement-breakpoint
ALTER TABLE `agents` ADD `version` integer DEFAULT 0 NOT NULL;