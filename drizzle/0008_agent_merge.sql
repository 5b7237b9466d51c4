ALTER TABLE `agents` ADD `merged_into` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `merge_strategy` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `merge_commit` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `merged_head` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `merged_at` integer;