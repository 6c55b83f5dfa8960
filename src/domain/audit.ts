// The application audit log: one entry per Open API record write and per management action.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { first, type UnitOfWork } from '../db/store.js';
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

export function createAuditLog({ store }: Deps) {
  const { auditLog } = store.schema;

  return {
    /** Appends an entry; callers run it inside the transaction of the change it describes. */
    async record(uow: UnitOfWork, e: { appId: string; action: string; baseId?: string; tableId?: string; recordId?: string; requestId?: string; detail?: Record<string, unknown> }): Promise<void> {
      // The detail is handed over as JSON text, which the JSON column encodes once more: that is how every entry has
      // been stored so far (it reads back as that text), so entries old and new read back alike.
      const detail = (e.detail ? JSON.stringify(e.detail) : null) as unknown as Record<string, unknown> | null;
      await uow.db.insert(auditLog).values({
        id: newId('aud'), appId: e.appId, action: e.action, baseId: e.baseId ?? null, tableId: e.tableId ?? null, recordId: e.recordId ?? null,
        requestId: e.requestId ?? null, at: nowIso(), detail,
      });
    },

    async listAudit(appId: string, q: { page?: number | null; perPage?: number | null; action?: string | null }): Promise<Page<AuditEntry>> {
      const p = pageArgs(q.page, q.perPage, { defaultSize: 20, maxSize: 200, sizeName: 'per_page' });
      const where = q.action ? and(eq(auditLog.appId, appId), eq(auditLog.action, q.action)) : eq(auditLog.appId, appId);
      const items = (await store.db.select().from(auditLog).where(where).orderBy(desc(store.insertionOrder)).limit(p.pageSize).offset(p.offset)) as AuditEntry[];
      const total = (await first(store.db.select({ n: count() }).from(auditLog).where(where)))!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
