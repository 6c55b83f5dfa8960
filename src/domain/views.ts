// Views of a table (contract section 13): grid, form, kanban, gallery and calendar; personal, locked, shared by link.
import { randomBytes } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { first, type ConditionGroup, type SortKey, type UnitOfWork } from '../db/store.js';
import { conflict, forbidden, invalidField, notFound } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import { newId, nowIso } from '../ids.js';
import { checkName } from '../checks.js';
import { atLeast, type Access } from './access.js';
import type { Actor, Deps } from './deps.js';
import type { EventLog } from './events.js';
import type { FieldService } from './fields.js';
import { fieldResolver, parseFilter, parseSort } from './record-query.js';
import { typeOfField } from '../fields/registry.js';

export const VIEW_TYPES = ['grid', 'form', 'kanban', 'gallery', 'calendar'] as const;
export type ViewType = (typeof VIEW_TYPES)[number];

export interface View {
  id: string;
  tableId: string;
  baseId: string;
  name: string;
  type: string;
  filter: unknown;
  sort: unknown;
  hiddenFields: string[];
  fieldOrder: string[];
  config: Record<string, unknown>;
  personal: boolean;
  locked: boolean;
  createdBy: string | null;
  shareId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ViewInput {
  name?: unknown; type?: unknown; filter?: unknown; sort?: unknown; hiddenFields?: unknown; fieldOrder?: unknown;
  config?: unknown; personal?: unknown; locked?: unknown;
}

/** What a view selects, ready for the record store: its condition, its sort and the fields it shows, in its order. */
export interface ViewQuery { where?: ConditionGroup; sort?: SortKey[]; visible: FieldDef[] }

/** A request through a view: the view's filter ANDed with the request's, its sort unless the request sorts, its visible fields. */
export function combineView(v: ViewQuery, where: ConditionGroup | undefined, sort: SortKey[] | undefined): Required<Omit<ViewQuery, 'where' | 'sort'>> & ViewQuery {
  return { where: v.where && where ? { conjunction: 'and', conditions: [v.where, where] } : v.where ?? where, sort: sort ?? v.sort, visible: v.visible };
}

export const DEFAULT_VIEW_NAME = 'Grid view';
const GROUP_TYPES = new Set(['single_select', 'user']);
const DATE_TYPES = new Set(['date', 'created_time', 'last_modified_time']);

const viewEvent = (v: View) => ({
  id: v.id, name: v.name, type: v.type, filter: v.filter, sort: v.sort, hidden_fields: v.hiddenFields, field_order: v.fieldOrder,
  config: v.config, personal: v.personal, locked: v.locked,
});

/** A filter as stored: the same grammar, every field named by id (checked first by the section 4 parser). */
function storedFilter(raw: unknown, fields: FieldDef[]): unknown {
  if (raw === undefined || raw === null || raw === '') return null;
  parseFilter(raw, fields);
  const resolve = fieldResolver(fields);
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return { conjunction: 'and', conditions: node.map(walk) };
    const n = node as Record<string, unknown>;
    if ('field' in n) return { field: resolve(n.field)!.id, operator: n.operator, ...('value' in n ? { value: n.value } : {}) };
    return { conjunction: n.conjunction ?? 'and', conditions: (n.conditions as unknown[]).map(walk) };
  };
  // Always a group at the top, so readers meet one shape: a bare condition is a group of one.
  const top = walk(typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
  return 'field' in top ? { conjunction: 'and', conditions: [top] } : top;
}

function storedSort(raw: unknown, fields: FieldDef[]): unknown {
  const keys = parseSort(raw, fields);
  return keys?.length ? keys.map((k) => ({ field: k.field.id, direction: k.direction })) : null;
}

function fieldIds(raw: unknown, fields: FieldDef[], name: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidField(name, 'must be an array of field names or ids');
  const resolve = fieldResolver(fields);
  return [...new Set(raw.map((k) => {
    const f = resolve(k);
    if (!f) throw invalidField(name, `unknown field ${JSON.stringify(k)}`);
    return f.id;
  }))];
}

/** Checks a view's config for its type and stores its fields by id. */
function checkConfig(type: ViewType, raw: unknown, fields: FieldDef[]): Record<string, unknown> {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw invalidField('config', 'must be an object');
  const c = (raw ?? {}) as Record<string, unknown>;
  const resolve = fieldResolver(fields);
  const need = (key: string, ok: Set<string>, what: string) => {
    const f = resolve(c[key]);
    if (!f) throw invalidField(`config.${key}`, c[key] === undefined ? `a ${type} view needs ${key}` : `unknown field ${JSON.stringify(c[key])}`);
    if (!ok.has(f.type)) throw invalidField(`config.${key}`, `"${f.name}" is a ${f.type} field; ${key} must be ${what}`);
    return f.id;
  };
  if (type === 'kanban') return { group_field: need('group_field', GROUP_TYPES, 'a single_select or user field') };
  if (type === 'calendar') return { date_field: need('date_field', DATE_TYPES, 'a date field') };
  if (type === 'gallery') {
    if (c.cover_field === undefined || c.cover_field === null) return { cover_field: null };
    const f = resolve(c.cover_field);
    if (!f) throw invalidField('config.cover_field', `unknown field ${JSON.stringify(c.cover_field)}`);
    return { cover_field: f.id };
  }
  if (type === 'form') {
    const text = (key: string, fallback: string) => {
      if (c[key] === undefined || c[key] === null) return fallback;
      if (typeof c[key] !== 'string') throw invalidField(`config.${key}`, 'must be a string');
      return c[key] as string;
    };
    // A public form cannot offer user or link fields: their choices would be the base's members or another table's records.
    const askable = (f: FieldDef) => !typeOfField(f).readOnly && f.type !== 'user' && f.type !== 'link';
    const list = c.fields ?? fields.filter(askable).map((f) => ({ field: f.id }));
    if (!Array.isArray(list)) throw invalidField('config.fields', 'must be an array of {field, required?, label?}');
    const seen = new Set<string>();
    const formFields = list.map((item, i) => {
      const it = (typeof item === 'string' ? { field: item } : item) as Record<string, unknown>;
      const f = typeof it === 'object' && it !== null ? resolve(it.field) : undefined;
      if (!f) throw invalidField(`config.fields[${i}]`, `unknown field ${JSON.stringify((it as { field?: unknown })?.field)}`);
      if (!askable(f)) throw invalidField(`config.fields[${i}]`, `"${f.name}" is a ${f.type} field, which a form cannot ask (read-only, user or link)`);
      if (seen.has(f.id)) throw invalidField(`config.fields[${i}]`, `"${f.name}" is listed twice`);
      seen.add(f.id);
      if (it.required !== undefined && typeof it.required !== 'boolean') throw invalidField(`config.fields[${i}].required`, 'must be a boolean');
      if (it.label !== undefined && it.label !== null && typeof it.label !== 'string') throw invalidField(`config.fields[${i}].label`, 'must be a string');
      return { field: f.id, required: (it.required as boolean | undefined) ?? f.required, label: (it.label as string | undefined) ?? null };
    });
    return { title: text('title', ''), description: text('description', ''), fields: formFields, submit_message: text('submit_message', 'Thank you: your answer was recorded.') };
  }
  // A grid keeps its column widths (pixels by field id); other settings stay the web app's.
  const widths = c.column_widths;
  if (widths === undefined || widths === null) return {};
  if (typeof widths !== 'object' || Array.isArray(widths)) throw invalidField('config.column_widths', 'must be an object of widths by field id');
  const out: Record<string, number> = {};
  for (const [k, w] of Object.entries(widths)) {
    const f = resolve(k);
    if (!f) throw invalidField('config.column_widths', `unknown field ${JSON.stringify(k)}`);
    if (typeof w !== 'number' || !(w >= 32 && w <= 2000)) throw invalidField('config.column_widths', `width of "${f.name}" must be a number from 32 to 2000`);
    out[f.id] = Math.round(w);
  }
  return { column_widths: out };
}

/** The field ids a view cannot lose (its group, date, cover and form fields). */
export function neededFields(v: Pick<View, 'type' | 'config'>): string[] {
  const c = v.config;
  if (v.type === 'kanban') return [c.group_field as string];
  if (v.type === 'calendar') return [c.date_field as string];
  if (v.type === 'gallery') return c.cover_field ? [c.cover_field as string] : [];
  if (v.type === 'form') return ((c.fields as Array<{ field: string }>) ?? []).map((f) => f.field);
  return [];
}

export function createViewService({ store }: Deps, access: Access, fieldService: FieldService, events: EventLog) {
  const { views } = store.schema;
  const load = async (uow: UnitOfWork, id: string) => (await first(uow.db.select().from(views).where(eq(views.id, id)).limit(1))) as View | undefined;

  /** A view the actor may see: another's personal view is as absent as a missing one. */
  async function visible(uow: UnitOfWork, id: string, actor: Actor | null): Promise<View> {
    const v = await load(uow, id);
    if (!v || (v.personal && v.createdBy !== actor?.id)) throw notFound(`View ${id} not found`);
    return v;
  }

  async function assertUniqueName(tx: UnitOfWork, tableId: string, name: string, exceptId?: string) {
    const clash = (await tx.db.select({ id: views.id, name: views.name }).from(views).where(eq(views.tableId, tableId)))
      .find((v) => v.name.toLowerCase() === name.toLowerCase() && v.id !== exceptId);
    if (clash) throw conflict(`A view named "${clash.name}" already exists in this table`);
  }

  async function insert(tx: UnitOfWork, tableId: string, baseId: string, input: ViewInput, actor: Actor | null): Promise<View> {
    const type = (input.type ?? 'grid') as ViewType;
    if (!VIEW_TYPES.includes(type)) throw invalidField('type', `must be one of ${VIEW_TYPES.join(', ')}`);
    const name = checkName(input.name);
    await assertUniqueName(tx, tableId, name);
    const fields = await fieldService.loadFields(tx, tableId);
    if (input.personal !== undefined && typeof input.personal !== 'boolean') throw invalidField('personal', 'must be a boolean');
    if (input.locked !== undefined && typeof input.locked !== 'boolean') throw invalidField('locked', 'must be a boolean');
    if (input.locked && actor && !atLeast(await access.roleWithin(tx, actor, baseId), 'admin')) throw forbidden('Only base admins lock views');
    const now = nowIso();
    const row: View = {
      id: newId('viw'), tableId, baseId, name, type, filter: storedFilter(input.filter, fields), sort: storedSort(input.sort, fields),
      hiddenFields: fieldIds(input.hiddenFields, fields, 'hidden_fields'), fieldOrder: fieldIds(input.fieldOrder, fields, 'field_order'),
      config: checkConfig(type, input.config, fields), personal: !!input.personal, locked: !!input.locked,
      createdBy: actor?.id ?? null, shareId: null, createdAt: now, updatedAt: now,
    };
    await tx.db.insert(views).values(row);
    await events.append(tx, baseId, actor, [{ type: 'view.created', tableId, data: { view: viewEvent(row) } }]);
    return row;
  }

  /** Another's personal view is absent; a locked one takes an admin; editors change the others. */
  async function writable(tx: UnitOfWork, id: string, actor: Actor | null): Promise<View> {
    const v = await visible(tx, id, actor);
    if (v.locked && actor && !atLeast(await access.roleWithin(tx, actor, v.baseId), 'admin')) throw forbidden(`View "${v.name}" is locked: only base admins change it`);
    return v;
  }

  async function list(tableId: string, actor: Actor | null): Promise<View[]> {
    let rows = (await store.db.select().from(views).where(eq(views.tableId, tableId)).orderBy(asc(views.createdAt), asc(views.id))) as View[];
    if (!rows.length) {
      // Tables made before views get their default grid view on first look (no migration rewrites every table).
      rows = await store.transaction(async (tx) => {
        const again = (await tx.db.select().from(views).where(eq(views.tableId, tableId))) as View[];
        if (again.length) return again;
        const baseId = await access.baseOf({ tableId });
        return [await insert(tx, tableId, baseId, { name: DEFAULT_VIEW_NAME, type: 'grid' }, null)];
      });
    }
    return rows.filter((v) => !v.personal || v.createdBy === actor?.id);
  }

  /** The record query of a view: stored ids resolve through the current fields, missing ones are dropped. */
  function queryOf(v: View, fields: FieldDef[]): ViewQuery {
    const byId = new Map(fields.map((f) => [f.id, f]));
    const hidden = new Set(v.hiddenFields);
    const order = v.fieldOrder.filter((id) => byId.has(id));
    const rest = fields.filter((f) => !order.includes(f.id)).map((f) => f.id);
    let ids = [...order, ...rest];
    if (v.type === 'form') ids = (v.config.fields as Array<{ field: string }>).map((f) => f.field).filter((id) => byId.has(id));
    return {
      where: v.filter ? parseFilter(v.filter, fields) : undefined,
      sort: v.sort ? parseSort(v.sort, fields) : undefined,
      visible: ids.filter((id) => !hidden.has(id)).map((id) => byId.get(id)!),
    };
  }

  // A removed field leaves the views that only filtered, sorted, hid or ordered by it; one that needs it refuses (409).
  fieldService.beforeDelete(async (tx, tableId, field) => {
    const rows = (await tx.db.select().from(views).where(eq(views.tableId, tableId))) as View[];
    for (const v of rows) {
      if (neededFields(v).includes(field.id)) throw conflict(`Field "${field.name}" is used by view "${v.name}": change or delete the view first`);
      const drop = (node: any): any => {
        if (!node) return node;
        if ('field' in node) return node.field === field.id ? undefined : node;
        const conditions = node.conditions.map(drop).filter(Boolean);
        return conditions.length ? { ...node, conditions } : undefined;
      };
      const filter = drop(v.filter) ?? null;
      const sort = ((v.sort as Array<{ field: string }> | null) ?? []).filter((k) => k.field !== field.id);
      const widths = { ...(v.config.column_widths as Record<string, number> | undefined) };
      delete widths[field.id];
      const changes = {
        filter, sort: sort.length ? sort : null,
        hiddenFields: v.hiddenFields.filter((id) => id !== field.id), fieldOrder: v.fieldOrder.filter((id) => id !== field.id),
        config: v.config.column_widths ? { ...v.config, column_widths: widths } : v.config,
      };
      if (JSON.stringify(changes) !== JSON.stringify({ filter: v.filter, sort: v.sort, hiddenFields: v.hiddenFields, fieldOrder: v.fieldOrder, config: v.config })) {
        await tx.db.update(views).set(changes).where(eq(views.id, v.id));
      }
    }
  });

  return {
    list,
    queryOf,
    async getView(id: string, actor: Actor | null): Promise<View> {
      return visible(store, id, actor);
    },
    /** A `view_id` parameter of a record list: a view of that table the actor may see, else 400 naming view_id. */
    async viewOfTable(id: string, tableId: string, actor: Actor | null): Promise<View> {
      const v = await visible(store, id, actor).catch(() => undefined);
      if (!v || v.tableId !== tableId) throw invalidField('view_id', `no view ${id} in table ${tableId}`);
      return v;
    },
    /** The new table's default grid view, inside the transaction that creates the table. */
    createDefault: (tx: UnitOfWork, tableId: string, baseId: string, actor: Actor | null) => insert(tx, tableId, baseId, { name: DEFAULT_VIEW_NAME, type: 'grid' }, actor),

    async createView(tableId: string, input: ViewInput, actor: Actor | null): Promise<View> {
      const baseId = await access.baseOf({ tableId });
      await list(tableId, actor); // the default view first, so a table's first own view is never its only one
      return store.transaction((tx) => insert(tx, tableId, baseId, input, actor));
    },

    async updateView(id: string, input: ViewInput, actor: Actor | null): Promise<View> {
      return store.transaction(async (tx) => {
        const v = await writable(tx, id, actor);
        const fields = await fieldService.loadFields(tx, v.tableId);
        const changes: Partial<View> = { updatedAt: nowIso() };
        if (input.name !== undefined) {
          changes.name = checkName(input.name);
          await assertUniqueName(tx, v.tableId, changes.name, id);
        }
        if (input.type !== undefined && input.type !== v.type) throw invalidField('type', 'a view keeps its type: create another view');
        if (input.filter !== undefined) changes.filter = storedFilter(input.filter, fields);
        if (input.sort !== undefined) changes.sort = storedSort(input.sort, fields);
        if (input.hiddenFields !== undefined) changes.hiddenFields = fieldIds(input.hiddenFields, fields, 'hidden_fields');
        if (input.fieldOrder !== undefined) changes.fieldOrder = fieldIds(input.fieldOrder, fields, 'field_order');
        if (input.config !== undefined) changes.config = checkConfig(v.type as ViewType, { ...v.config, ...(input.config as object) }, fields);
        if (input.personal !== undefined) {
          if (typeof input.personal !== 'boolean') throw invalidField('personal', 'must be a boolean');
          if (input.personal !== v.personal && v.createdBy !== actor?.id) throw forbidden('Only the creator of a view makes it personal');
          // Everyone keeps at least one view of the table.
          const shared = (await tx.db.select({ id: views.id, personal: views.personal }).from(views).where(eq(views.tableId, v.tableId))).filter((x) => !x.personal && x.id !== id);
          if (input.personal && !v.personal && !shared.length) throw conflict(`View "${v.name}" is the table's last shared view: it cannot become personal`);
          changes.personal = input.personal;
        }
        if (input.locked !== undefined) {
          if (typeof input.locked !== 'boolean') throw invalidField('locked', 'must be a boolean');
          if (input.locked !== v.locked && actor && !atLeast(await access.roleWithin(tx, actor, v.baseId), 'admin')) throw forbidden('Only base admins lock or unlock views');
          changes.locked = input.locked;
        }
        await tx.db.update(views).set(changes).where(eq(views.id, id));
        const after = (await load(tx, id))!;
        await events.append(tx, v.baseId, actor, [{ type: 'view.updated', tableId: v.tableId, data: { before: viewEvent(v), after: viewEvent(after) } }]);
        return after;
      });
    },

    async deleteView(id: string, actor: Actor | null): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        const v = await writable(tx, id, actor);
        const all = await tx.db.select({ id: views.id }).from(views).where(eq(views.tableId, v.tableId));
        if (all.length <= 1) throw conflict(`View "${v.name}" is the last view of its table and cannot be deleted`);
        await tx.db.delete(views).where(eq(views.id, id));
        await events.append(tx, v.baseId, actor, [{ type: 'view.deleted', tableId: v.tableId, data: { view: viewEvent(v) } }]);
        return { id, deleted: true as const };
      });
    },

    /** Shares a view by link (a new share id unless it is shared already). */
    async share(id: string, actor: Actor | null): Promise<View> {
      return store.transaction(async (tx) => {
        const v = await visible(tx, id, actor);
        if (v.shareId) return v;
        // 24 random bytes: the link is the only secret, and it says nothing of the view, table or base.
        const shareId = `shr${randomBytes(24).toString('base64url')}`;
        await tx.db.update(views).set({ shareId, updatedAt: nowIso() }).where(eq(views.id, id));
        const after = (await load(tx, id))!;
        await events.append(tx, v.baseId, actor, [{ type: 'view.updated', tableId: v.tableId, data: { before: viewEvent(v), after: viewEvent(after), shared: true } }]);
        return after;
      });
    },

    async unshare(id: string, actor: Actor | null): Promise<View> {
      return store.transaction(async (tx) => {
        const v = await visible(tx, id, actor);
        if (!v.shareId) return v;
        await tx.db.update(views).set({ shareId: null, updatedAt: nowIso() }).where(eq(views.id, id));
        const after = (await load(tx, id))!;
        await events.append(tx, v.baseId, actor, [{ type: 'view.updated', tableId: v.tableId, data: { before: viewEvent(v), after: viewEvent(after), shared: false } }]);
        return after;
      });
    },

    /** The view a share id names; a stopped or unknown share is 404 and says nothing more. */
    async byShare(shareId: string): Promise<View> {
      const v = (await first(store.db.select().from(views).where(and(eq(views.shareId, shareId))).limit(1))) as View | undefined;
      if (!v) throw notFound('This link is not shared');
      return v;
    },
  };
}

export type ViewService = ReturnType<typeof createViewService>;
