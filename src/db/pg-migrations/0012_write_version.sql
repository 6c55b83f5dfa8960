CREATE TABLE "write_version" (
	"id" bigint PRIMARY KEY NOT NULL,
	"n" bigint NOT NULL
);
--> statement-breakpoint
-- The one row the read cache compares (pg-store.ts readVersion): every write transaction increments it as it commits.
INSERT INTO "write_version" ("id", "n") VALUES (1, 0);
