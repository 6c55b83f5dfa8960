-- Trigram indexes back keyword search on PostgreSQL (per-base record tables); added by hand, drizzle-kit does not manage extensions.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE TABLE "app_tokens" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "app_tokens_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"jti" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"scope" text NOT NULL,
	"issued_at" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"revoked_at" text
);
--> statement-breakpoint
CREATE TABLE "apps" (
	"id" text PRIMARY KEY NOT NULL,
	"app_name" text NOT NULL,
	"client_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"callback_url" text NOT NULL,
	"allowed_bases" json NOT NULL,
	"scopes" json NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"rate_limit_per_minute" bigint NOT NULL,
	"write_rate_limit_per_minute" bigint NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"action" text NOT NULL,
	"base_id" text,
	"table_id" text,
	"record_id" text,
	"request_id" text,
	"at" text NOT NULL,
	"detail" json
);
--> statement-breakpoint
CREATE TABLE "base_members" (
	"base_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "base_members_base_id_user_id_pk" PRIMARY KEY("base_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "bases" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "fields" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"required" boolean DEFAULT false NOT NULL,
	"options" json,
	"config" json NOT NULL,
	"indexed" boolean DEFAULT false NOT NULL,
	"position" bigint NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plugin_configs" (
	"plugin_id" text NOT NULL,
	"base_id" text NOT NULL,
	"config" json NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "plugin_configs_plugin_id_base_id_pk" PRIMARY KEY("plugin_id","base_id")
);
--> statement-breakpoint
CREATE TABLE "plugin_files" (
	"plugin_id" text NOT NULL,
	"version" text NOT NULL,
	"path" text NOT NULL,
	"content" "bytea" NOT NULL,
	CONSTRAINT "plugin_files_plugin_id_version_path_pk" PRIMARY KEY("plugin_id","version","path")
);
--> statement-breakpoint
CREATE TABLE "plugin_installations" (
	"plugin_id" text NOT NULL,
	"base_id" text NOT NULL,
	"enabled" boolean NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "plugin_installations_plugin_id_base_id_pk" PRIMARY KEY("plugin_id","base_id")
);
--> statement-breakpoint
CREATE TABLE "plugin_runs" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "plugin_runs_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"plugin_id" text NOT NULL,
	"version" text NOT NULL,
	"kind" text NOT NULL,
	"endpoint" text,
	"base_id" text NOT NULL,
	"user_id" text NOT NULL,
	"status" text NOT NULL,
	"started_at" text NOT NULL,
	"finished_at" text,
	"duration_ms" bigint,
	"result" json,
	"error" text,
	"traceback" text,
	"logs" json NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plugin_storage" (
	"plugin_id" text NOT NULL,
	"base_id" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "plugin_storage_plugin_id_base_id_key_pk" PRIMARY KEY("plugin_id","base_id","key")
);
--> statement-breakpoint
CREATE TABLE "plugin_versions" (
	"plugin_id" text NOT NULL,
	"version" text NOT NULL,
	"manifest" json NOT NULL,
	"uploaded_at" text NOT NULL,
	CONSTRAINT "plugin_versions_plugin_id_version_pk" PRIMARY KEY("plugin_id","version")
);
--> statement-breakpoint
CREATE TABLE "plugins" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"current_version" text NOT NULL,
	"status" text NOT NULL,
	"consecutive_failures" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revoked_tokens" (
	"jti" text PRIMARY KEY NOT NULL,
	"expires_at" bigint NOT NULL,
	"revoked_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_dirty" (
	"table_id" text NOT NULL,
	"seq" bigint NOT NULL,
	CONSTRAINT "search_dirty_table_id_seq_pk" PRIMARY KEY("table_id","seq")
);
--> statement-breakpoint
CREATE TABLE "search_state" (
	"table_id" text PRIMARY KEY NOT NULL,
	"indexed_seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_keys" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tables" (
	"id" text PRIMARY KEY NOT NULL,
	"base_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text NOT NULL,
	"is_admin" boolean DEFAULT false NOT NULL,
	"default_base_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_runs" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "workflow_runs_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"workflow_id" text NOT NULL,
	"table_id" text NOT NULL,
	"record_id" text,
	"trigger_type" text NOT NULL,
	"depth" bigint DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"queued_at" text NOT NULL,
	"started_at" text,
	"finished_at" text,
	"error" text,
	"steps" json NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"trigger" json NOT NULL,
	"nodes" json NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "base_members" ADD CONSTRAINT "base_members_base_id_bases_id_fk" FOREIGN KEY ("base_id") REFERENCES "public"."bases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "base_members" ADD CONSTRAINT "base_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fields" ADD CONSTRAINT "fields_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_configs" ADD CONSTRAINT "plugin_configs_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_installations" ADD CONSTRAINT "plugin_installations_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_installations" ADD CONSTRAINT "plugin_installations_base_id_bases_id_fk" FOREIGN KEY ("base_id") REFERENCES "public"."bases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_runs" ADD CONSTRAINT "plugin_runs_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_storage" ADD CONSTRAINT "plugin_storage_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plugin_versions" ADD CONSTRAINT "plugin_versions_plugin_id_plugins_id_fk" FOREIGN KEY ("plugin_id") REFERENCES "public"."plugins"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tables" ADD CONSTRAINT "tables_base_id_bases_id_fk" FOREIGN KEY ("base_id") REFERENCES "public"."bases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "app_tokens_app" ON "app_tokens" USING btree ("app_id","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "apps_client_id" ON "apps" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "audit_app" ON "audit_log" USING btree ("app_id");--> statement-breakpoint
CREATE INDEX "base_members_user" ON "base_members" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "fields_table" ON "fields" USING btree ("table_id");--> statement-breakpoint
CREATE INDEX "plugin_runs_plugin" ON "plugin_runs" USING btree ("plugin_id","base_id");--> statement-breakpoint
CREATE INDEX "tables_base" ON "tables" USING btree ("base_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "workflow_runs_workflow" ON "workflow_runs" USING btree ("workflow_id");--> statement-breakpoint
CREATE INDEX "workflow_runs_status" ON "workflow_runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "workflows_table" ON "workflows" USING btree ("table_id");