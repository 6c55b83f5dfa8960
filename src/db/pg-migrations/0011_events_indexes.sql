ALTER TABLE "events" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
DROP INDEX "events_at";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_base_id_seq_pk" PRIMARY KEY USING INDEX "events_base_seq";
