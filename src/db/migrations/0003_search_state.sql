CREATE TABLE `search_dirty` (
	`table_id` text NOT NULL,
	`seq` integer NOT NULL,
	PRIMARY KEY(`table_id`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `search_state` (
	`table_id` text PRIMARY KEY NOT NULL,
	`indexed_seq` integer NOT NULL
);
