CREATE TABLE `workers` (
	`name` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`revoked_at` integer,
	`drained` integer DEFAULT false NOT NULL,
	`capabilities` text,
	`server_id` text,
	`epoch` integer DEFAULT 0 NOT NULL,
	`connected_at` integer,
	`heartbeat_at` integer,
	`lost_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `agents` ADD `worker` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `worker_epoch` integer;--> statement-breakpoint
ALTER TABLE `agents` ADD `placement` text;