CREATE TABLE `app_tokens` (
	`jti` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`scope` text NOT NULL,
	`issued_at` text NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE INDEX `app_tokens_app` ON `app_tokens` (`app_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`app_name` text NOT NULL,
	`client_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`callback_url` text NOT NULL,
	`allowed_bases` text NOT NULL,
	`scopes` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`rate_limit_per_minute` integer NOT NULL,
	`write_rate_limit_per_minute` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_client_id` ON `apps` (`client_id`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`action` text NOT NULL,
	`base_id` text,
	`table_id` text,
	`record_id` text,
	`request_id` text,
	`at` text NOT NULL,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_app` ON `audit_log` (`app_id`);