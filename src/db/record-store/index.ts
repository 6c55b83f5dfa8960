// The record store of every engine: one SQL table per user table and one column per field, run through a SqlClient
// whose dialect holds the spellings that differ. The parts, one per concept, are the other files of this folder.
import type { RecordStore } from '../store.js';
import type { SqlClient } from '../sql-client.js';
import { createContext } from './context.js';
import { eventRows } from './event-rows.js';
import { recordReads } from './reads.js';
import { schemaChanges } from './schema.js';
import { searchIndex } from './search-index.js';
import { recordWrites } from './writes.js';

export function createRecordStore(client: SqlClient): RecordStore {
  const ctx = createContext(client);
  const { markSearchDirty, takeTurnWithSync, ...search } = searchIndex(ctx);
  return {
    ...schemaChanges(ctx),
    ...search,
    ...recordWrites(ctx, { markSearchDirty, takeTurnWithSync }),
    ...recordReads(ctx),
    ...eventRows(ctx),
    forgetStatements: () => client.forgetStatements(),
  };
}
