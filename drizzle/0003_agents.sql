CREATE TABLE `agent_approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`input` text NOT NULL,
	`status` text NOT NULL,
	`message` text,
	`created_at` integer NOT NULL,
	`decided_at` integer
);
--> statement-breakpoint
CREATE INDEX `agent_approvals_agent_idx` ON `agent_approvals` (`agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `agent_approvals_status_idx` ON `agent_approvals` (`status`);--> statement-breakpoint
CREATE TABLE `agent_log_chunks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`session` integer NOT NULL,
	`seq` integer NOT NULL,
	`first_line` integer NOT NULL,
	`line_count` integer NOT NULL,
	`bytes` integer NOT NULL,
	`content` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_log_chunks_line_idx` ON `agent_log_chunks` (`agent_id`,`first_line`);--> statement-breakpoint
CREATE INDEX `agent_log_chunks_session_idx` ON `agent_log_chunks` (`agent_id`,`session`,`seq`);--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`alias` text NOT NULL,
	`provider` text NOT NULL,
	`status` text NOT NULL,
	`status_reason` text,
	`mode` text NOT NULL,
	`permission_mode` text NOT NULL,
	`prompt` text NOT NULL,
	`task` text NOT NULL,
	`model` text,
	`repo_path` text,
	`base_ref` text,
	`base_commit` text,
	`branch` text,
	`workspace_path` text NOT NULL,
	`workspace_kind` text NOT NULL,
	`workspace_removed` integer DEFAULT false NOT NULL,
	`config_dir` text NOT NULL,
	`session_id` text,
	`session_number` integer DEFAULT 0 NOT NULL,
	`pid` integer,
	`pid_start` text,
	`output_path` text,
	`output_offset` integer DEFAULT 0 NOT NULL,
	`line_count` integer DEFAULT 0 NOT NULL,
	`chunk_seq` integer DEFAULT 0 NOT NULL,
	`result` text,
	`pending_questions` text DEFAULT '[]' NOT NULL,
	`queued_messages` text DEFAULT '[]' NOT NULL,
	`usage_total` text DEFAULT '{}' NOT NULL,
	`usage_session` text DEFAULT '{}' NOT NULL,
	`missing_signal_retries` integer DEFAULT 0 NOT NULL,
	`exit_code` integer,
	`task_id` text,
	`phase_id` text,
	`initiative_id` text,
	`account_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agents_alias_idx` ON `agents` (`alias`);--> statement-breakpoint
CREATE INDEX `agents_status_idx` ON `agents` (`status`);--> statement-breakpoint
CREATE INDEX `agents_task_idx` ON `agents` (`task_id`);--> statement-breakpoint
CREATE INDEX `agents_phase_idx` ON `agents` (`phase_id`);