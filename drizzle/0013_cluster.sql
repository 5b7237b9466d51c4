CREATE TABLE `prepared_runs` (
	`run_id` text PRIMARY KEY NOT NULL,
	`input` text NOT NULL,
	`server_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `leases` (
	`kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`server_id` text NOT NULL,
	`epoch` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`kind`, `entity_id`)
);
--> statement-breakpoint
CREATE INDEX `leases_server_idx` ON `leases` (`server_id`);--> statement-breakpoint
CREATE INDEX `leases_expires_idx` ON `leases` (`kind`,`expires_at`);--> statement-breakpoint
CREATE TABLE `server_commands` (
	`id` text PRIMARY KEY NOT NULL,
	`server_id` text NOT NULL,
	`from_server_id` text NOT NULL,
	`op` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`result` text,
	`created_at` integer NOT NULL,
	`done_at` integer
);
--> statement-breakpoint
CREATE INDEX `server_commands_server_idx` ON `server_commands` (`server_id`,`status`);--> statement-breakpoint
CREATE TABLE `servers` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`hostname` text NOT NULL,
	`pid` integer NOT NULL,
	`version` text NOT NULL,
	`started_at` integer NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`stopped_at` integer
);
