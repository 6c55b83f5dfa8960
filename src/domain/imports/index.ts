// The import operations the API calls: check the spooled file and options, queue the job (and, for a new table,
// create the table at once so its id is in the answer).
import type { Deps, UserActor } from '../deps.js';
import type { FieldService } from '../fields.js';
import type { JobService } from '../jobs.js';
import type { RecordService } from '../records.js';
import type { TableService } from '../tables.js';
import { createImporter } from './import-job.js';

export function createImportService(deps: Deps, o: { records: RecordService; fields: FieldService; tables: TableService; jobs: JobService }) {
  const { store } = deps;
  const importer = createImporter({ dataDir: deps.config.dataDir, records: o.records, fields: o.fields, jobs: o.jobs });
  /** A refused import leaves no file behind. */
  async function owning<T>(upload: unknown, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      importer.discard(upload);
      throw e;
    }
  }

  return {
    importer,
    async importIntoTable(actor: UserActor, tableId: string, upload: unknown, fileName: string, options: unknown): Promise<{ jobId: string; tableId: string }> {
      return owning(upload, async () => {
        const table = await o.tables.getTable(tableId);
        const input = await importer.prepareInto(await o.fields.loadFields(store, tableId), upload, fileName, options);
        const jobId = await store.transaction((tx) => o.jobs.enqueue(tx, {
          type: 'import', baseId: table.baseId, tableId, createdBy: actor.id, input: { ...input }, spool: importer.spoolId,
        }));
        return { jobId, tableId };
      });
    },

    async importNewTable(actor: UserActor, baseId: string, upload: unknown, fileName: string, options: unknown): Promise<{ jobId: string; tableId: string }> {
      return owning(upload, async () => {
        const { input, name } = await importer.prepareNew(upload, fileName, options);
        // The table exists from now on (its name is taken, its id answered); the job adds its fields and rows.
        const table = await o.tables.createTable(baseId, { name }, actor);
        const jobId = await store.transaction((tx) => o.jobs.enqueue(tx, {
          type: 'import', baseId, tableId: table.id, createdBy: actor.id, input: { ...input }, spool: importer.spoolId,
        }));
        return { jobId, tableId: table.id };
      });
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;
