DROP INDEX "events_record";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "event_count" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX "events_rows_of_many" ON "events" USING btree ("table_id") WHERE "events"."event_count" > 1;--> statement-breakpoint
CREATE INDEX "events_record" ON "events" USING btree ("record_id") WHERE "events"."event_count" = 1;--> statement-breakpoint
-- A row of events may hold a batch write's 100 events (some 35 kB of JSON): lz4 compresses it several times faster than
-- the default pglz. Servers built without lz4 (or before PostgreSQL 14) keep the default.
DO $$ BEGIN EXECUTE 'ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4'; EXCEPTION WHEN OTHERS THEN NULL; END $$;
