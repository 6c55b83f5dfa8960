CREATE TABLE "jobs" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "jobs_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"base_id" text NOT NULL,
	"table_id" text,
	"created_by" text NOT NULL,
	"input" json NOT NULL,
	"spool" text NOT NULL,
	"processed" bigint DEFAULT 0 NOT NULL,
	"total" bigint,
	"imported" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"errors" json NOT NULL,
	"error" text,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"created_at" text NOT NULL,
	"started_at" text,
	"finished_at" text,
	"lease_until" text
);
--> statement-breakpoint
CREATE INDEX "jobs_status" ON "jobs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "jobs_created_by" ON "jobs" USING btree ("created_by");