// The application audit log: one entry per Open API record write and per management action.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { auditLog } from '../db/schema.js';
import { newId, nowIso } from '../ids.js';
import type { Deps } from './deps.js';
import { pageArgs, type Page } from './pagination.js';

export interface AuditEntry {
  id: string;
  appId: string;
  action: string;
  baseId: string | null;
  tableId: string | null;
  recordId: string | null;
  requestId: string | null;
  at: string;
  detail: Record<string, unknown> | null;
}

export function createAuditLog({ orm }: Deps) {
  const insert = orm.insert(auditLog).values({
    id: sql.placeholder('id'), appId: sql.placeholder('appId'), action: sql.placeholder('action'), baseId: sql.placeholder('baseId'),
    tableId: sql.placeholder('tableId'), recordId: sql.placeholder('recordId'), requestId: sql.placeholder('requestId'),
    at: sql.placeholder('at'), detail: sql.placeholder('detail'),
  }).prepare();

  return {
    /** Appends an entry; callers run it inside the transaction of the change it describes. */
    record(e: { appId: string; action: string; baseId?: string; tableId?: string; recordId?: string; requestId?: string; detail?: Record<string, unknown> }) {
      insert.run({
        id: newId('aud'), appId: e.appId, action: e.action, baseId: e.baseId ?? null, tableId: e.tableId ?? null, recordId: e.recordId ?? null,
        requestId: e.requestId ?? null, at: nowIso(), detail: e.detail ? JSON.stringify(e.detail) : null,
      });
    },

    async listAudit(appId: string, q: { page?: number | null; perPage?: number | null; action?: string | null }): Promise<Page<AuditEntry>> {
      const p = pageArgs(q.page, q.perPage, { defaultSize: 20, maxSize: 200, sizeName: 'per_page' });
      const where = q.action ? and(eq(auditLog.appId, appId), eq(auditLog.action, q.action)) : eq(auditLog.appId, appId);
      const items = orm.select().from(auditLog).where(where).orderBy(desc(sql`rowid`)).limit(p.pageSize).offset(p.offset).all() as AuditEntry[];
      const total = orm.select({ n: count() }).from(auditLog).where(where).get()!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
