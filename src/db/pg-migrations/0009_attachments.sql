CREATE TABLE "attachment_chunks" (
	"attachment_id" text NOT NULL,
	"variant" text NOT NULL,
	"seq" bigint NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "attachment_chunks_attachment_id_variant_seq_pk" PRIMARY KEY("attachment_id","variant","seq")
);
--> statement-breakpoint
CREATE TABLE "attachments" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" text NOT NULL,
	"name" text NOT NULL,
	"size" bigint NOT NULL,
	"mime_type" text NOT NULL,
	"sha256" text NOT NULL,
	"thumbnails" json,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "attachments_created_at" ON "attachments" USING btree ("created_at");