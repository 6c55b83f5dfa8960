CREATE TABLE `attachment_chunks` (
	`attachment_id` text NOT NULL,
	`variant` text NOT NULL,
	`seq` integer NOT NULL,
	`data` blob NOT NULL,
	PRIMARY KEY(`attachment_id`, `variant`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`mime_type` text NOT NULL,
	`sha256` text NOT NULL,
	`thumbnails` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `attachments_created_at` ON `attachments` (`created_at`);