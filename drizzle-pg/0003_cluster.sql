CREATE TABLE "prepared_runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"input" text NOT NULL,
	"server_id" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"kind" text NOT NULL,
	"entity_id" text NOT NULL,
	"server_id" text NOT NULL,
	"epoch" integer NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "leases_kind_entity_id_pk" PRIMARY KEY("kind","entity_id")
);
--> statement-breakpoint
CREATE TABLE "server_commands" (
	"id" text PRIMARY KEY NOT NULL,
	"server_id" text NOT NULL,
	"from_server_id" text NOT NULL,
	"op" text NOT NULL,
	"payload" text NOT NULL,
	"status" text NOT NULL,
	"result" text,
	"created_at" bigint NOT NULL,
	"done_at" bigint
);
--> statement-breakpoint
CREATE TABLE "servers" (
	"id" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"hostname" text NOT NULL,
	"pid" integer NOT NULL,
	"version" text NOT NULL,
	"started_at" bigint NOT NULL,
	"heartbeat_at" bigint NOT NULL,
	"stopped_at" bigint
);
--> statement-breakpoint
CREATE INDEX "leases_server_idx" ON "leases" USING btree ("server_id");--> statement-breakpoint
CREATE INDEX "leases_expires_idx" ON "leases" USING btree ("kind","expires_at");--> statement-breakpoint
CREATE INDEX "server_commands_server_idx" ON "server_commands" USING btree ("server_id","status");