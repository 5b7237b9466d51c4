CREATE TABLE `daemon_queue` (
	`daemon_id` text NOT NULL,
	`seq` integer NOT NULL,
	`enqueued_at` text NOT NULL,
	`payload` text NOT NULL,
	`state` text NOT NULL,
	PRIMARY KEY(`daemon_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `daemon_queue_state_idx` ON `daemon_queue` (`daemon_id`,`state`,`seq`);--> statement-breakpoint
CREATE TABLE `daemons` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`persist_path` text NOT NULL,
	`model` text NOT NULL,
	`status` text NOT NULL,
	`loop_status` text,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `daemons_path_idx` ON `daemons` (`persist_path`);--> statement-breakpoint
CREATE INDEX `daemons_status_idx` ON `daemons` (`status`);