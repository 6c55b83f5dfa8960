// Views shared by link (contract section 13): what the public page reads and the public form's submissions, without login.
import { AppError, invalidField, notFound } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import type { Deps, ShareActor } from './deps.js';
import type { FieldService } from './fields.js';
import type { Page } from './pagination.js';
import { fieldResolver } from './record-query.js';
import type { RecordService } from './records.js';
import type { View, ViewService } from './views.js';

/** Submissions from one address per minute, accepted or not. */
export const SUBMISSIONS_PER_MINUTE = 30;
/** Types a share never shows: user values are member ids, links are ids of another table's records. */
const PRIVATE_TYPES = new Set(['user', 'link']);

export interface SharedRecord { id: string; fields: Record<string, unknown>; createdAt: string }

export function createShareService(deps: Deps, o: { views: ViewService; records: RecordService; fields: FieldService }) {
  const { store, limiter } = deps;

  /** The fields a share shows: the view's visible ones, minus those that would name members or other tables. */
  async function shown(v: View): Promise<{ all: FieldDef[]; visible: FieldDef[] }> {
    const all = await o.fields.loadFields(store, v.tableId);
    return { all, visible: o.views.queryOf(v, all).visible.filter((f) => !PRIVATE_TYPES.has(f.type)) };
  }

  /** The config as a share shows it: only ids of fields it shows (a hidden group, date or cover field reads null). */
  function publicConfig(v: View, visible: FieldDef[]) {
    const ids = new Set(visible.map((f) => f.id));
    const c = v.config;
    if (v.type === 'form') return { ...c, fields: (c.fields as Array<{ field: string }>).filter((f) => ids.has(f.field)) };
    if (v.type === 'grid') return c.column_widths ? { column_widths: Object.fromEntries(Object.entries(c.column_widths as object).filter(([id]) => ids.has(id))) } : {};
    const key = { kanban: 'group_field', calendar: 'date_field', gallery: 'cover_field' }[v.type]!;
    return { [key]: ids.has(c[key] as string) ? c[key] : null };
  }

  return {
    async describe(shareId: string) {
      const v = await o.views.byShare(shareId);
      const { visible } = await shown(v);
      return {
        name: v.name, type: v.type, config: publicConfig(v, visible),
        fields: visible.map((f) => ({ id: f.id, name: f.name, type: f.type, options: f.options })),
      };
    },

    async records(shareId: string, q: { page?: number | null; pageSize?: number | null }): Promise<Page<SharedRecord>> {
      const v = await o.views.byShare(shareId);
      if (v.type === 'form') throw notFound('A shared form has no records');
      const page = await o.records.listRecords(v.tableId, {
        page: q.page, pageSize: q.pageSize,
        view: (fields) => ({ ...o.views.queryOf(v, fields), visible: o.views.queryOf(v, fields).visible.filter((f) => !PRIVATE_TYPES.has(f.type)) }),
      });
      // No creator or editor ids: they would name members.
      return { ...page, items: page.items.map((r) => ({ id: r.id, fields: r.fields, createdAt: r.createdAt })) };
    },

    /** A public form's submission: its fields only, its required rules, section 4's validation; 30 a minute per address. */
    async submit(shareId: string, values: unknown, clientAddress: string): Promise<{ id: string }> {
      const rate = await limiter.hit(`share-submit:${clientAddress}`, SUBMISSIONS_PER_MINUTE);
      if (!rate.allowed) {
        throw new AppError('RATE_LIMITED', `At most ${SUBMISSIONS_PER_MINUTE} submissions a minute; retry in ${rate.resetSeconds} s`, { headers: { 'Retry-After': String(rate.resetSeconds) } });
      }
      const v = await o.views.byShare(shareId);
      if (v.type !== 'form') throw notFound('Only a shared form takes submissions');
      if (typeof values !== 'object' || values === null || Array.isArray(values)) throw invalidField('fields', 'must be an object keyed by field name or id');
      const { all, visible } = await shown(v);
      const resolve = fieldResolver(all);
      const rules = new Map((v.config.fields as Array<{ field: string; required: boolean; label: string | null }>).map((f) => [f.field, f]));
      const allowed = new Set(visible.map((f) => f.id));
      const byId: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(values)) {
        const f = resolve(key);
        if (!f || !allowed.has(f.id)) throw invalidField(key, 'is not a field of this form');
        byId[f.id] = value;
      }
      for (const f of visible) {
        const empty = byId[f.id] === undefined || byId[f.id] === null || byId[f.id] === '' || (Array.isArray(byId[f.id]) && !(byId[f.id] as unknown[]).length);
        if (rules.get(f.id)?.required && empty) throw invalidField(rules.get(f.id)?.label || f.name, 'is required');
      }
      const actor: ShareActor = { kind: 'share', id: v.id, baseId: v.baseId, isAdmin: false };
      const record = await o.records.createRecord(actor, v.tableId, byId);
      return { id: record.id };
    },
  };
}

export type ShareService = ReturnType<typeof createShareService>;
