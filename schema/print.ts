// Prints the schema to schema/schema.graphql (`npm run schema:print`); a test fails when the file drifts.
import { printSchema, lexicographicSortSchema } from 'graphql';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schema } from './index.js';

export const SCHEMA_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'schema.graphql');
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
    console.log(`Usage: npm run schema:print\n\nWrites the GraphQL schema, printed and sorted, to ${SCHEMA_FILE} (checked in; a test fails when it drifts).`);
    process.exit(0);
  }
  fs.writeFileSync(SCHEMA_FILE, printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
