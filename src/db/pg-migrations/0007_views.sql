CREATE TABLE "views" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"base_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"filter" json,
	"sort" json,
	"hidden_fields" json NOT NULL,
	"field_order" json NOT NULL,
	"config" json NOT NULL,
	"personal" boolean DEFAULT false NOT NULL,
	"locked" boolean DEFAULT false NOT NULL,
	"created_by" text,
	"share_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "views" ADD CONSTRAINT "views_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "views_table" ON "views" USING btree ("table_id");--> statement-breakpoint
CREATE UNIQUE INDEX "views_share" ON "views" USING btree ("share_id");