// drizzle-kit configuration for PostgreSQL: `npm run db:generate` also writes migrations for src/db/pg-schema.ts.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg-schema.ts',
  out: './src/db/pg-migrations',
});
