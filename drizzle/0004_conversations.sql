CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`from_agent_id` text NOT NULL,
	`to_agent_id` text NOT NULL,
	`initiative_id` text,
	`phase_id` text,
	`task_id` text,
	`question` text NOT NULL,
	`answer` text,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_to_status_idx` ON `conversations` (`to_agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `conversations_from_idx` ON `conversations` (`from_agent_id`);