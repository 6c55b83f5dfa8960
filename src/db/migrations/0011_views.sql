CREATE TABLE `views` (
	`id` text PRIMARY KEY NOT NULL,
	`table_id` text NOT NULL,
	`base_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`filter` text,
	`sort` text,
	`hidden_fields` text NOT NULL,
	`field_order` text NOT NULL,
	`config` text NOT NULL,
	`personal` integer DEFAULT false NOT NULL,
	`locked` integer DEFAULT false NOT NULL,
	`created_by` text,
	`share_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`table_id`) REFERENCES `tables`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `views_table` ON `views` (`table_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `views_share` ON `views` (`share_id`);