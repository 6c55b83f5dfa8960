// The Open API for applications (spec 1, 4.3): the allow-list, scopes, and records keyed by field id.
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { readCache } from '../db/read-cache.js';
import type { UnitOfWork } from '../db/store.js';
import { AppError, notFound } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import type { AppService, Scope } from './apps.js';
import type { AuditLog } from './audit.js';
import type { Actor, AppActor, Deps } from './deps.js';
import type { FieldService } from './fields.js';
import type { ApiRecord, RecordService } from './records.js';
import type { ViewQuery } from './views.js';

export const MAX_PER_PAGE = 200;

export interface OpenBase { id: string; name: string; description: string; createdAt: string; updatedAt: string }
export interface OpenTable { id: string; baseId: string; name: string; description: string; createdAt: string; updatedAt: string }

export function createOpenApiService(deps: Deps, apps: AppService, audit: AuditLog, fieldService: FieldService, records: RecordService) {
  const { store } = deps;
  const { bases, tables } = store.schema;

  /**
   * Spec 1, 5.3 after the token itself: an application token (a user token is refused), the base in the
   * application's current allow-list, then the scope in both the token and the application's current scopes.
   */
  function authorize(actor: Actor | null, scope: Scope, baseId?: string): AppActor {
    if (!actor) throw new AppError('UNAUTHORIZED', 'An application token is required: Authorization: Bearer <access_token>');
    if (actor.kind !== 'app') throw new AppError('FORBIDDEN', 'The Open API takes application tokens, not user tokens');
    const app = apps.current(actor.id);
    if (!app) throw new AppError('UNAUTHORIZED', 'The application no longer exists');
    if (!app.isActive) throw new AppError('FORBIDDEN', 'The application is disabled');
    if (baseId !== undefined && !app.allowedBases.includes(baseId)) throw new AppError('FORBIDDEN', `The application may not access base ${baseId}`);
    if (!actor.tokenScopes.includes(scope) || !app.scopes.includes(scope)) throw new AppError('FORBIDDEN', `The token lacks the ${scope} scope`);
    return actor;
  }

  // Prepared once on the store (reads outside transactions) and cached: every Open API request looks up its base and table.
  const baseById = store.db.select().from(bases).where(eq(bases.id, sql.placeholder('id'))).prepare();
  const tableById = store.db.select().from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  const cachedBase = readCache(store, async (id) => (await baseById.execute({ id }))[0]);
  const cachedTable = readCache(store, async (id) => (await tableById.execute({ id }))[0]);

  async function base(baseId: string) {
    const row = await cachedBase(baseId);
    if (!row) throw notFound(`Base ${baseId} not found`);
    return row;
  }

  /** A table inside the base of the path; a table of another base is as missing as one that does not exist. */
  async function table(baseId: string, tableId: string) {
    await base(baseId);
    const row = await cachedTable(tableId);
    if (!row || row.baseId !== baseId) throw notFound(`Table ${tableId} not found in base ${baseId}`);
    return row;
  }

  /** Open API writes take values keyed by field id or name, bare or wrapped under `values`. */
  function unwrap(body: unknown, fields: FieldDef[]): unknown {
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const keys = Object.keys(body);
      const wrapped = (body as Record<string, unknown>).values;
      if (keys.length === 1 && keys[0] === 'values' && wrapped && typeof wrapped === 'object' && !fields.some((f) => f.name === 'values' || f.id === 'values')) {
        return wrapped;
      }
    }
    return body;
  }

  function auditWrite(actor: AppActor, action: string, baseId: string, tableId: string, requestId: string) {
    // Runs inside the record write's transaction, so the entries commit or roll back with the write.
    return async (tx: UnitOfWork, ids: string[]) => {
      for (const recordId of ids) await audit.record(tx, { appId: actor.id, action, baseId, tableId, recordId, requestId });
    };
  }

  return {
    authorize,

    async listBases(actor: AppActor): Promise<OpenBase[]> {
      const allowed = apps.current(actor.id)?.allowedBases ?? [];
      if (!allowed.length) return [];
      return store.db.select().from(bases).where(inArray(bases.id, allowed)).orderBy(asc(bases.createdAt));
    },
    async getBase(baseId: string): Promise<OpenBase & { tables: OpenTable[] }> {
      const row = await base(baseId);
      return { ...row, tables: await store.db.select().from(tables).where(eq(tables.baseId, baseId)).orderBy(asc(tables.createdAt)) };
    },
    async listTables(baseId: string): Promise<OpenTable[]> {
      await base(baseId);
      return store.db.select().from(tables).where(eq(tables.baseId, baseId)).orderBy(asc(tables.createdAt));
    },
    async getTable(baseId: string, tableId: string): Promise<OpenTable & { fields: FieldDef[] }> {
      return { ...(await table(baseId, tableId)), fields: await fieldService.loadFields(store, tableId) };
    },
    async listFields(baseId: string, tableId: string): Promise<FieldDef[]> {
      await table(baseId, tableId);
      return fieldService.loadFields(store, tableId);
    },
    async listRecords(baseId: string, tableId: string, q: { page?: number | null; perPage?: number | null; filter?: unknown; sort?: unknown; view?: (fields: FieldDef[]) => ViewQuery }) {
      await table(baseId, tableId);
      return records.listRecords(tableId, { page: q.page, pageSize: q.perPage, filter: q.filter, sort: q.sort, view: q.view, keyBy: 'id', maxPageSize: MAX_PER_PAGE, sizeName: 'per_page' });
    },
    async searchRecords(baseId: string, tableId: string, q: { q: unknown; page?: number | null; perPage?: number | null }) {
      await table(baseId, tableId);
      return records.searchRecords(tableId, { q: q.q, page: q.page, pageSize: q.perPage, keyBy: 'id', maxPageSize: MAX_PER_PAGE, sizeName: 'per_page' });
    },
    async getRecord(baseId: string, tableId: string, recordId: string): Promise<ApiRecord> {
      await table(baseId, tableId);
      return records.getRecord(tableId, recordId, 'id');
    },
    async createRecord(actor: AppActor, baseId: string, tableId: string, body: unknown, requestId: string): Promise<ApiRecord> {
      await table(baseId, tableId);
      const values = unwrap(body, await fieldService.loadFields(store, tableId));
      return records.createRecord(actor, tableId, values, { keyBy: 'id', inTransaction: auditWrite(actor, 'record.create', baseId, tableId, requestId) });
    },
    async updateRecord(actor: AppActor, baseId: string, tableId: string, recordId: string, body: unknown, requestId: string): Promise<ApiRecord> {
      await table(baseId, tableId);
      const values = unwrap(body, await fieldService.loadFields(store, tableId));
      return records.updateRecord(actor, tableId, recordId, values, { keyBy: 'id', inTransaction: auditWrite(actor, 'record.update', baseId, tableId, requestId) });
    },
    async deleteRecord(actor: AppActor, baseId: string, tableId: string, recordId: string, requestId: string) {
      await table(baseId, tableId);
      return records.deleteRecord(actor, tableId, recordId, { inTransaction: auditWrite(actor, 'record.delete', baseId, tableId, requestId) });
    },
  };
}

export type OpenApiService = ReturnType<typeof createOpenApiService>;
