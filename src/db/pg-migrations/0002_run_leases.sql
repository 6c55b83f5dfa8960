ALTER TABLE "plugin_runs" ADD COLUMN "lease_until" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "lease_until" text;