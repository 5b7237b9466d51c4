ALTER TABLE `agents` ADD `run_reason` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `disk_bytes` integer;--> statement-breakpoint
ALTER TABLE `agents` ADD `disk_checked_at` integer;