DROP INDEX "events_record";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "event_count" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX "events_rows_of_many" ON "events" USING btree ("table_id") WHERE "events"."event_count" > 1;--> statement-breakpoint
CREATE INDEX "events_record" ON "events" USING btree ("record_id") WHERE "events"."event_count" = 1;