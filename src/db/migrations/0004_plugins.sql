CREATE TABLE `plugin_configs` (
	`plugin_id` text NOT NULL,
	`base_id` text NOT NULL,
	`config` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`plugin_id`, `base_id`),
	FOREIGN KEY (`plugin_id`) REFERENCES `plugins`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `plugin_files` (
	`plugin_id` text NOT NULL,
	`version` text NOT NULL,
	`path` text NOT NULL,
	`content` blob NOT NULL,
	PRIMARY KEY(`plugin_id`, `version`, `path`)
);
--> statement-breakpoint
CREATE TABLE `plugin_installations` (
	`plugin_id` text NOT NULL,
	`base_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`plugin_id`, `base_id`),
	FOREIGN KEY (`plugin_id`) REFERENCES `plugins`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `plugin_storage` (
	`plugin_id` text NOT NULL,
	`base_id` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`plugin_id`, `base_id`, `key`),
	FOREIGN KEY (`plugin_id`) REFERENCES `plugins`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `plugin_versions` (
	`plugin_id` text NOT NULL,
	`version` text NOT NULL,
	`manifest` text NOT NULL,
	`uploaded_at` text NOT NULL,
	PRIMARY KEY(`plugin_id`, `version`),
	FOREIGN KEY (`plugin_id`) REFERENCES `plugins`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `plugins` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`current_version` text NOT NULL,
	`status` text NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
