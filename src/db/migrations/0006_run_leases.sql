ALTER TABLE `plugin_runs` ADD `lease_until` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `lease_until` text;