PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_events` (
	`id` text NOT NULL,
	`base_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`table_id` text,
	`record_id` text,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`at` text NOT NULL,
	`data` text NOT NULL,
	PRIMARY KEY(`base_id`, `seq`)
);
--> statement-breakpoint
INSERT INTO `__new_events`("id", "base_id", "seq", "type", "table_id", "record_id", "actor_type", "actor_id", "at", "data") SELECT "id", "base_id", "seq", "type", "table_id", "record_id", "actor_type", "actor_id", "at", "data" FROM `events`;--> statement-breakpoint
DROP TABLE `events`;--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `events_record` ON `events` (`record_id`);