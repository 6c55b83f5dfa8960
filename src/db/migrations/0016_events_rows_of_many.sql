DROP INDEX `events_record`;--> statement-breakpoint
ALTER TABLE `events` ADD `event_count` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `events_rows_of_many` ON `events` (`table_id`) WHERE "events"."event_count" > 1;--> statement-breakpoint
CREATE INDEX `events_record` ON `events` (`record_id`) WHERE "events"."event_count" = 1;