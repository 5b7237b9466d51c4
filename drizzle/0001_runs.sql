CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`cwd` text NOT NULL,
	`strategy_name` text NOT NULL,
	`strategy_path` text NOT NULL,
	`status` text NOT NULL,
	`segment` integer NOT NULL,
	`started_at` integer NOT NULL,
	`completed_at` integer,
	`model_override` text,
	`manifest_path` text,
	`input` text,
	`result` text,
	`error_code` text,
	`error_message` text,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_cwd_idx` ON `runs` (`cwd`,`started_at`);--> statement-breakpoint
CREATE INDEX `runs_status_idx` ON `runs` (`status`);--> statement-breakpoint
CREATE INDEX `runs_started_idx` ON `runs` (`started_at`);