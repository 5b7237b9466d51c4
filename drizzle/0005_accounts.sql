CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`label` text NOT NULL,
	`email` text,
	`kind` text NOT NULL,
	`secret` text NOT NULL,
	`refresh_token` text,
	`secret_hint` text NOT NULL,
	`expires_at` integer,
	`config_dir` text NOT NULL,
	`invalid_reason` text,
	`exhausted_until` integer,
	`exhausted_reason` text,
	`last_used_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_label_idx` ON `accounts` (`label`);--> statement-breakpoint
CREATE INDEX `accounts_provider_idx` ON `accounts` (`provider`,`last_used_at`);--> statement-breakpoint
ALTER TABLE `agents` ADD `run_prompt` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `run_resumed` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `commit_requests` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `cleanup_warning` text;