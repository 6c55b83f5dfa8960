CREATE TABLE `trash` (
	`id` text PRIMARY KEY NOT NULL,
	`base_id` text NOT NULL,
	`type` text NOT NULL,
	`table_id` text NOT NULL,
	`item_id` text NOT NULL,
	`name` text NOT NULL,
	`payload` text NOT NULL,
	`deleted_at` text NOT NULL,
	`deleted_by` text,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `trash_base_deleted` ON `trash` (`base_id`,`deleted_at`);--> statement-breakpoint
CREATE INDEX `trash_expires` ON `trash` (`expires_at`);