CREATE TABLE `events` (
	`id` integer PRIMARY KEY NOT NULL,
	`ts` integer NOT NULL,
	`type` text NOT NULL,
	`run_id` text,
	`agent_id` text,
	`daemon_id` text,
	`conversation_id` text,
	`payload` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_run_idx` ON `events` (`run_id`,`id`) WHERE "events"."run_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_agent_idx` ON `events` (`agent_id`,`id`) WHERE "events"."agent_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_daemon_idx` ON `events` (`daemon_id`,`id`) WHERE "events"."daemon_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_conversation_idx` ON `events` (`conversation_id`,`id`) WHERE "events"."conversation_id" IS NOT NULL;