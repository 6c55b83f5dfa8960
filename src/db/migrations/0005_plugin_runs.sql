CREATE TABLE `plugin_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`plugin_id` text NOT NULL,
	`version` text NOT NULL,
	`kind` text NOT NULL,
	`endpoint` text,
	`base_id` text NOT NULL,
	`user_id` text NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`duration_ms` integer,
	`result` text,
	`error` text,
	`traceback` text,
	`logs` text NOT NULL,
	FOREIGN KEY (`plugin_id`) REFERENCES `plugins`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `plugin_runs_plugin` ON `plugin_runs` (`plugin_id`,`base_id`);