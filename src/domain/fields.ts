// Fields of a table: create, change (rename, retype with value conversion, options, required, index) and delete.
import { and, asc, count, eq, max, sql } from 'drizzle-orm';
import { first, type Db, type UnitOfWork } from '../db/store.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { FIELD_TYPE_NAMES, ValueError, type FieldDef, type ValueContext } from '../fields/field-type.js';
import { fieldType, isFieldTypeName, typeOfField } from '../fields/registry.js';
import { displayFormula } from '../fields/formula/index.js';
import { newId, nowIso } from '../ids.js';
import { resolveComputed, isComputed } from './computed/definitions.js';
import { buildGraph, dependentsOf } from './computed/graph.js';
import type { ComputedEngine } from './computed/recompute.js';
import type { Actor, Deps } from './deps.js';
import { eventField, type EventLog } from './events.js';
import { pageArgs, type Page } from './pagination.js';

export interface FieldInput {
  name?: unknown;
  type?: unknown;
  required?: unknown;
  options?: unknown;
  config?: unknown;
  indexed?: unknown;
}


/** `onSearchReset` hears (once the change has committed) of tables whose search index must be rebuilt after a field change. */
export function createFieldService(deps: Deps, computed: ComputedEngine, events: EventLog, onSearchReset: (tableId: string) => void = () => {}) {
  const { store } = deps;
  const { fields, tables, baseMembers } = store.schema;
  /** Run inside a field's delete before it goes: the views drop it or refuse (409). */
  const deleteHooks: Array<(tx: UnitOfWork, tableId: string, field: FieldDef) => Promise<void>> = [];

  // Prepared once on the store, for the cached reads outside transactions.
  const fieldsOfTable = store.db.select().from(fields).where(eq(fields.tableId, sql.placeholder('tableId'))).orderBy(asc(fields.position)).prepare();

  /**
   * Field definitions by table, read on every record operation. Cleared by every change made here (when it is made and
   * again once it has committed, so a reader that refilled the cache from the last commit meanwhile leaves nothing
   * stale), and whenever another process commits, which `store.externalVersion()` reveals. Reads inside a transaction
   * bypass the cache: they must see the transaction's own changes, which may still roll back.
   */
  const cache = new Map<string, FieldDef[]>();
  let seenVersion = -1;
  /** Moves on every invalidation, so a read that began before one does not fill the cache with what it read. */
  let generation = 0;
  function invalidate() {
    cache.clear();
    generation++;
    computed.forget();
  }
  /** Transactions that changed field definitions: their own reads must see what the cache does not hold yet. */
  const changedIn = new WeakSet<UnitOfWork>();
  /** After a change of field definitions inside `uow`. */
  function changed(uow: UnitOfWork) {
    changedIn.add(uow);
    invalidate();
    computed.definitionsChanged(uow);
    uow.afterCommit(invalidate);
    uow.announce('schema');
  }
  // The same query for reads inside transactions, prepared once per connection (every record write reads the fields).
  const fieldsOfTableIn = (db: Db) => db.select().from(fields).where(eq(fields.tableId, sql.placeholder('tableId'))).orderBy(asc(fields.position)).prepare();
  // A SQLite transaction sees the last commit, which is what the cache holds (another process's commit moves
  // externalVersion, checked below), so every record write need not read the fields again; PostgreSQL's cache may lag
  // another process's commit by up to a second, so there a transaction always reads. The cache is never filled from a
  // transaction: what it read may still roll back.
  const cacheInTransactions = store.engine === 'sqlite';
  async function loadFields(uow: UnitOfWork, tableId: string): Promise<FieldDef[]> {
    const read = async () => (await uow.prepared(fieldsOfTableIn).execute({ tableId })) as FieldDef[];
    if (uow.inTransaction && (!cacheInTransactions || changedIn.has(uow))) return read();
    const version = store.externalVersion();
    if (version !== seenVersion) {
      invalidate();
      seenVersion = version;
    }
    const cached = cache.get(tableId);
    if (cached) return cached;
    if (uow.inTransaction) return read();
    const seenGeneration = generation;
    const defs = (await fieldsOfTable.execute({ tableId })) as FieldDef[];
    if (generation === seenGeneration) cache.set(tableId, defs);
    return defs;
  }

  async function getField(uow: UnitOfWork, tableId: string, fieldId: string): Promise<FieldDef> {
    const row = await first(uow.db.select().from(fields).where(and(eq(fields.id, fieldId), eq(fields.tableId, tableId))).limit(1));
    if (!row) throw notFound(`Field ${fieldId} not found in table ${tableId}`);
    return row as FieldDef;
  }

  /** Link fields anywhere that point at a table. */
  async function linksTo(uow: UnitOfWork, tableId: string): Promise<FieldDef[]> {
    return ((await uow.db.select().from(fields).where(eq(fields.type, 'link'))) as FieldDef[]).filter((f) => f.config.table_id === tableId);
  }

  /**
   * What field types check values against: the members of a base, loaded here, since types ask synchronously.
   * Inside a transaction, pass `tx`, so members added by it count.
   */
  async function memberContext(uow: UnitOfWork, baseId: string): Promise<ValueContext> {
    const rows = await uow.db.select({ id: baseMembers.userId }).from(baseMembers).where(eq(baseMembers.baseId, baseId));
    const members = new Set(rows.map((m) => m.id));
    return { isBaseMember: (userId) => members.has(userId) };
  }

  async function checkName(uow: UnitOfWork, tableId: string, name: unknown, exceptId?: string): Promise<string> {
    if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw invalidField('name', 'must be 1 to 255 characters');
    const trimmed = name.trim();
    const clash = (await loadFields(uow, tableId)).find((f) => f.name.toLowerCase() === trimmed.toLowerCase() && f.id !== exceptId);
    if (clash) throw conflict(`A field named "${clash.name}" already exists in this table`);
    return trimmed;
  }

  /** Validates type, options and config together; link targets must be tables of the same base. */
  async function settingsFor(uow: UnitOfWork, baseId: string, type: FieldDef['type'], options: unknown, config: unknown) {
    if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config))) throw invalidField('config', 'must be an object');
    try {
      const s = fieldType(type).normalizeSettings(options, (config ?? {}) as Record<string, unknown>);
      if (type === 'link') {
        const target = await first(uow.db.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, s.config.table_id as string)).limit(1));
        if (!target || target.baseId !== baseId) throw new ValueError(`config.table_id ${s.config.table_id} is not a table of this base`);
      }
      return s;
    } catch (e) {
      if (e instanceof ValueError) throw invalidField(/option/.test(e.message) && !/config/.test(e.message) ? 'options' : 'config', e.message);
      throw e;
    }
  }

  function checkBool(name: string, v: unknown): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw invalidField(name, 'must be true or false');
    return v;
  }

  function checkType(type: unknown) {
    if (!isFieldTypeName(type)) throw invalidField('type', `must be one of ${FIELD_TYPE_NAMES.join(', ')}`);
    return type;
  }

  /** Inside a transaction (`tx`): inserts the field's metadata and storage. */
  async function insertField(tx: UnitOfWork, tableId: string, baseId: string, input: FieldInput): Promise<FieldDef> {
    const name = await checkName(tx, tableId, input.name);
    const type = checkType(input.type);
    const required = checkBool('required', input.required) ?? false;
    const indexed = checkBool('indexed', input.indexed) ?? false;
    const { options, config } = await settingsFor(tx, baseId, type, input.options, input.config);
    if (required && fieldType(type).readOnly) throw invalidField('required', `a ${type} field is set by the service and cannot be required`);
    const position = ((await first(tx.db.select({ m: max(fields.position) }).from(fields).where(eq(fields.tableId, tableId))))?.m ?? -1) + 1;
    const field: FieldDef = { id: newId('fld'), tableId, name, type, required, options, config, indexed };
    if (isComputed(field)) field.config = resolveComputed(field, await computed.baseFields(tx, baseId));
    await tx.db.insert(fields).values({ ...field, position, createdAt: nowIso() });
    changed(tx);
    await tx.records.addField(tableId, field);
    if (isComputed(field)) await computed.fill(tx, baseId, [field]);
    return field;
  }

  async function baseOfTable(uow: UnitOfWork, tableId: string): Promise<string> {
    const t = await first(uow.db.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, tableId)).limit(1));
    if (!t) throw notFound(`Table ${tableId} not found`);
    return t.baseId;
  }

  /** 409 when computed fields other than `doomed` read any of them (`what` names them in the message). */
  async function checkUnread(tx: UnitOfWork, baseId: string, doomed: FieldDef[], what: string) {
    const graph = await computed.graphOf(tx, baseId);
    const ids = new Set(doomed.map((f) => f.id));
    const readers = [...new Set(doomed.flatMap((f) => dependentsOf(graph, f.id)))].filter((r) => !ids.has(r.id));
    if (readers.length) {
      throw conflict(`${what} is read by ${readers.map((f) => `"${f.name}"`).join(', ')}: change or delete ${readers.length > 1 ? 'them' : 'it'} first`);
    }
  }

  /** Inside a transaction: rewrites every value of a field under its new definition, converting what converts. */
  async function convertValues(tx: UnitOfWork, baseId: string, before: FieldDef, after: FieldDef) {
    const oldType = typeOfField(before);
    const newType = typeOfField(after);
    const ctx = await memberContext(tx, baseId);
    const converted = (await tx.records.readField(before.tableId, before))
      .map(({ id, raw }) => ({ id, stored: newType.convert(oldType.fromStored(raw, before), after, ctx) }))
      .filter((v) => v.stored !== null && !(Array.isArray(v.stored) && v.stored.length === 0));
    await tx.records.dropField(before.tableId, before);
    await tx.records.addField(after.tableId, after);
    await tx.records.fillField(after.tableId, after, converted);
  }

  /** Inside a transaction: the table's search index is rebuilt in the background once the change has committed. */
  async function resetSearch(tx: UnitOfWork, tableId: string) {
    await tx.records.resetSearch(tableId);
    tx.afterCommit(() => onSearchReset(tableId));
  }

  /** Set by the trash (built after this service): keeps a field's definition and values before it is dropped. */
  const trashHook: { field?: (tx: UnitOfWork, baseId: string, field: FieldDef, actor: Actor | null) => Promise<void> } = {};

  return {
    trashHook,
    loadFields,
    invalidate,
    checkUnread,
    beforeDelete(hook: (tx: UnitOfWork, tableId: string, field: FieldDef) => Promise<void>) {
      deleteHooks.push(hook);
    },
    /** After a change of field definitions inside `uow` made elsewhere (a table deleted with its fields). */
    changed,
    getField,
    linksTo,
    memberContext,
    insertField,

    async listFields(tableId: string, page?: number | null, pageSize?: number | null): Promise<Page<FieldDef>> {
      const p = pageArgs(page, pageSize, { defaultSize: 50, maxSize: 1000 });
      await baseOfTable(store, tableId);
      const all = await loadFields(store, tableId);
      return { items: all.slice(p.offset, p.offset + p.pageSize), total: all.length, page: p.page, pageSize: p.pageSize };
    },

    async createField(tableId: string, input: FieldInput, actor: Actor | null = null): Promise<FieldDef> {
      return store.transaction(async (tx) => {
        const baseId = await baseOfTable(tx, tableId);
        const field = await insertField(tx, tableId, baseId, input);
        await events.append(tx, baseId, actor, [{ type: 'field.created', tableId, data: { field: eventField(field) } }]);
        return field;
      });
    },

    async updateField(tableId: string, fieldId: string, input: FieldInput, actor: Actor | null = null): Promise<FieldDef> {
      return store.transaction(async (tx) => {
        const baseId = await baseOfTable(tx, tableId);
        const before = await getField(tx, tableId, fieldId);
        const name = input.name !== undefined ? await checkName(tx, tableId, input.name, fieldId) : before.name;
        const type = input.type !== undefined ? checkType(input.type) : before.type;
        const required = checkBool('required', input.required) ?? before.required;
        const indexed = checkBool('indexed', input.indexed) ?? before.indexed;
        const typeChanged = type !== before.type;
        // A new type starts from its own defaults unless new options/config come with it.
        const options = input.options !== undefined ? input.options : typeChanged ? (type.endsWith('select') ? before.options ?? [] : null) : before.options;
        const config = input.config !== undefined ? input.config : typeChanged ? {} : before.config;
        const settings = await settingsFor(tx, baseId, type, options, config);
        if (required && fieldType(type).readOnly) throw invalidField('required', `a ${type} field is set by the service and cannot be required`);
        const after: FieldDef = { ...before, name, type, required, indexed, ...settings };
        const baseFields = await computed.baseFields(tx, baseId);
        if (isComputed(after)) after.config = resolveComputed(after, baseFields.filter((f) => f.id !== fieldId));
        await tx.db.update(fields).set({ name, type, required, indexed, options: settings.options, config: after.config }).where(eq(fields.id, fieldId));
        changed(tx);
        const valuesChange = typeChanged
          || JSON.stringify(settings.options) !== JSON.stringify(before.options)
          || JSON.stringify(after.config) !== JSON.stringify(before.config);
        // A new type of a field that computed fields read: each must still compile, and is computed again.
        const readers = typeChanged ? dependentsOf(buildGraph(baseFields), fieldId) : [];
        const others = baseFields.map((f) => (f.id === fieldId ? after : f));
        for (const reader of readers) {
          try {
            resolveComputed(reader, others.filter((f) => f.id !== reader.id));
          } catch (e) {
            throw conflict(`Field "${reader.name}" reads "${before.name}" and would no longer work as a ${type} field: ${(e as Error).message}`);
          }
        }
        if (valuesChange && isComputed(after)) {
          await tx.records.dropField(before.tableId, before);
          await tx.records.addField(after.tableId, after);
          if (after.indexed) await tx.records.setIndexed(tableId, after, true);
          await computed.fill(tx, baseId, [after]);
        } else if (valuesChange) {
          await convertValues(tx, baseId, before, after);
          if (fieldType(before.type).searchable || fieldType(after.type).searchable) await resetSearch(tx, tableId);
        }
        else if (indexed !== before.indexed) await tx.records.setIndexed(tableId, after, indexed);
        if (readers.length) await computed.fill(tx, baseId, readers);
        if (valuesChange || name !== before.name) {
          // Again once committed: a read outside the transaction may have cached a plan of the old schema meanwhile.
          tx.records.forgetStatements();
          tx.afterCommit(() => tx.records.forgetStatements());
        }
        await events.append(tx, baseId, actor, [{ type: 'field.updated', tableId, data: { before: eventField(before), after: eventField(after) } }]);
        return after;
      });
    },

    async deleteField(tableId: string, fieldId: string, actor: Actor | null = null): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        const field = await getField(tx, tableId, fieldId);
        const baseId = await baseOfTable(tx, tableId);
        await checkUnread(tx, baseId, [field], `Field "${field.name}"`);
        for (const hook of deleteHooks) await hook(tx, tableId, field);
        await events.append(tx, baseId, actor, [{ type: 'field.deleted', tableId, data: { field: eventField(field) } }]);
        await trashHook.field?.(tx, baseId, field, actor);
        await tx.records.dropField(tableId, field);
        await tx.db.delete(fields).where(eq(fields.id, fieldId));
        changed(tx);
        if (fieldType(field.type).searchable) await resetSearch(tx, tableId);
        return { id: fieldId, deleted: true as const };
      });
    },

    /** The config as the API shows it: a formula's stored `{fld...}` references written with the current names. */
    async apiConfig(field: FieldDef): Promise<Record<string, unknown>> {
      if (field.type !== 'formula') return field.config;
      const names = new Map((await loadFields(store, field.tableId)).map((f) => [f.id, f.name]));
      return { ...field.config, expression: displayFormula(String(field.config.expression), (id) => names.get(id)) };
    },

    /** How far the background computation of a computed field has got, or null when its values are current. */
    async fillProgress(field: FieldDef): Promise<{ done: number; total: number } | null> {
      if (!isComputed(field)) return null;
      const row = await first(store.db.select({ after: fields.fillAfterSeq }).from(fields).where(eq(fields.id, field.id)));
      if (row?.after == null) return null;
      return store.records.progress(field.tableId, row.after);
    },

    async fieldCount(tableId: string): Promise<number> {
      return (await first(store.db.select({ n: count() }).from(fields).where(eq(fields.tableId, tableId))))!.n;
    },
  };
}

export type FieldService = ReturnType<typeof createFieldService>;
