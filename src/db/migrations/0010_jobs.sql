CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`base_id` text NOT NULL,
	`table_id` text,
	`created_by` text NOT NULL,
	`input` text NOT NULL,
	`spool` text NOT NULL,
	`processed` integer DEFAULT 0 NOT NULL,
	`total` integer,
	`imported` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`errors` text NOT NULL,
	`error` text,
	`cancel_requested` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`started_at` text,
	`finished_at` text,
	`lease_until` text
);
--> statement-breakpoint
CREATE INDEX `jobs_status` ON `jobs` (`status`);--> statement-breakpoint
CREATE INDEX `jobs_created_by` ON `jobs` (`created_by`);