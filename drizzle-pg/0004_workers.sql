CREATE TABLE "workers" (
	"name" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"revoked_at" bigint,
	"drained" boolean DEFAULT false NOT NULL,
	"capabilities" text,
	"server_id" text,
	"epoch" integer DEFAULT 0 NOT NULL,
	"connected_at" bigint,
	"heartbeat_at" bigint,
	"lost_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "worker" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "worker_epoch" integer;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "placement" text;