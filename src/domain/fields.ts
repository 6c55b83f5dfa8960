// Fields of a table: create, change (rename, retype with value conversion, options, required, index) and delete.
import { and, asc, count, eq, max, sql } from 'drizzle-orm';
import { fields, tables, baseMembers } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { FIELD_TYPE_NAMES, ValueError, type FieldDef, type ValueContext } from '../fields/field-type.js';
import { fieldType, isFieldTypeName } from '../fields/registry.js';
import { newId, nowIso } from '../ids.js';
import type { Deps } from './deps.js';
import { pageArgs, type Page } from './pagination.js';

export interface FieldInput {
  name?: unknown;
  type?: unknown;
  required?: unknown;
  options?: unknown;
  config?: unknown;
  indexed?: unknown;
}


/** `onSearchReset` hears of tables whose search index must be rebuilt after a field change. */
export function createFieldService(deps: Deps, onSearchReset: (tableId: string) => void = () => {}) {
  const { sqlite, orm, store } = deps;

  const fieldsOfTable = orm.select().from(fields).where(eq(fields.tableId, sql.placeholder('tableId'))).orderBy(asc(fields.position)).prepare();

  /**
   * Field definitions by table, read on every record operation. Cleared by every change made here, and whenever
   * another connection (another process, a restore) commits, which `PRAGMA data_version` reveals. Reads inside a
   * transaction bypass the cache, since the transaction may still roll back.
   */
  const cache = new Map<string, FieldDef[]>();
  let seenVersion = -1;
  function invalidate() {
    cache.clear();
  }
  function loadFields(tableId: string): FieldDef[] {
    if (sqlite.inTransaction) return fieldsOfTable.all({ tableId }) as FieldDef[];
    const version = sqlite.pragma('data_version', { simple: true }) as number;
    if (version !== seenVersion) {
      cache.clear();
      seenVersion = version;
    }
    let defs = cache.get(tableId);
    if (!defs) cache.set(tableId, (defs = fieldsOfTable.all({ tableId }) as FieldDef[]));
    return defs;
  }

  function getField(tableId: string, fieldId: string): FieldDef {
    const row = orm.select().from(fields).where(and(eq(fields.id, fieldId), eq(fields.tableId, tableId))).get();
    if (!row) throw notFound(`Field ${fieldId} not found in table ${tableId}`);
    return row as FieldDef;
  }

  /** Link fields anywhere that point at a table. */
  function linksTo(tableId: string): FieldDef[] {
    return (orm.select().from(fields).where(eq(fields.type, 'link')).all() as FieldDef[]).filter((f) => f.config.table_id === tableId);
  }

  function memberContext(baseId: string): ValueContext {
    let members: Set<string> | undefined;
    return {
      isBaseMember(userId) {
        members ??= new Set(orm.select({ id: baseMembers.userId }).from(baseMembers).where(eq(baseMembers.baseId, baseId)).all().map((m) => m.id));
        return members.has(userId);
      },
    };
  }

  function checkName(tableId: string, name: unknown, exceptId?: string): string {
    if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw invalidField('name', 'must be 1 to 255 characters');
    const trimmed = name.trim();
    const clash = loadFields(tableId).find((f) => f.name.toLowerCase() === trimmed.toLowerCase() && f.id !== exceptId);
    if (clash) throw conflict(`A field named "${clash.name}" already exists in this table`);
    return trimmed;
  }

  /** Validates type, options and config together; link targets must be tables of the same base. */
  function settingsFor(baseId: string, type: FieldDef['type'], options: unknown, config: unknown) {
    if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config))) throw invalidField('config', 'must be an object');
    try {
      const s = fieldType(type).normalizeSettings(options, (config ?? {}) as Record<string, unknown>);
      if (type === 'link') {
        const target = orm.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, s.config.table_id as string)).get();
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

  /** Inside a transaction: inserts the field's metadata and storage. */
  function insertField(tableId: string, baseId: string, input: FieldInput): FieldDef {
    const name = checkName(tableId, input.name);
    const type = checkType(input.type);
    const required = checkBool('required', input.required) ?? false;
    const indexed = checkBool('indexed', input.indexed) ?? false;
    const { options, config } = settingsFor(baseId, type, input.options, input.config);
    if (required && fieldType(type).readOnly) throw invalidField('required', `a ${type} field is set by the service and cannot be required`);
    const position = (orm.select({ m: max(fields.position) }).from(fields).where(eq(fields.tableId, tableId)).get()?.m ?? -1) + 1;
    const field: FieldDef = { id: newId('fld'), tableId, name, type, required, options, config, indexed };
    orm.insert(fields).values({ ...field, position, createdAt: nowIso() }).run();
    invalidate();
    store.addField(tableId, field);
    return field;
  }

  function baseOfTable(tableId: string): string {
    const t = orm.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, tableId)).get();
    if (!t) throw notFound(`Table ${tableId} not found`);
    return t.baseId;
  }

  /** Rewrites every value of a field under its new definition, converting what converts. */
  function convertValues(baseId: string, before: FieldDef, after: FieldDef) {
    const oldType = fieldType(before.type);
    const newType = fieldType(after.type);
    const ctx = memberContext(baseId);
    const converted = store.readField(before.tableId, before)
      .map(({ id, raw }) => ({ id, stored: newType.convert(oldType.fromStored(raw, before), after, ctx) }))
      .filter((v) => v.stored !== null && !(Array.isArray(v.stored) && v.stored.length === 0));
    store.dropField(before.tableId, before);
    store.addField(after.tableId, after);
    store.fillField(after.tableId, after, converted);
  }

  return {
    loadFields,
    invalidate,
    getField,
    linksTo,
    memberContext,
    insertField,

    async listFields(tableId: string, page?: number | null, pageSize?: number | null): Promise<Page<FieldDef>> {
      const p = pageArgs(page, pageSize, { defaultSize: 50, maxSize: 1000 });
      baseOfTable(tableId);
      const all = loadFields(tableId);
      return { items: all.slice(p.offset, p.offset + p.pageSize), total: all.length, page: p.page, pageSize: p.pageSize };
    },

    async createField(tableId: string, input: FieldInput): Promise<FieldDef> {
      return writeTransaction(sqlite, () => insertField(tableId, baseOfTable(tableId), input));
    },

    async updateField(tableId: string, fieldId: string, input: FieldInput): Promise<FieldDef> {
      return writeTransaction(sqlite, () => {
        const baseId = baseOfTable(tableId);
        const before = getField(tableId, fieldId);
        const name = input.name !== undefined ? checkName(tableId, input.name, fieldId) : before.name;
        const type = input.type !== undefined ? checkType(input.type) : before.type;
        const required = checkBool('required', input.required) ?? before.required;
        const indexed = checkBool('indexed', input.indexed) ?? before.indexed;
        const typeChanged = type !== before.type;
        // A new type starts from its own defaults unless new options/config come with it.
        const options = input.options !== undefined ? input.options : typeChanged ? (type.endsWith('select') ? before.options ?? [] : null) : before.options;
        const config = input.config !== undefined ? input.config : typeChanged ? {} : before.config;
        const settings = settingsFor(baseId, type, options, config);
        if (required && fieldType(type).readOnly) throw invalidField('required', `a ${type} field is set by the service and cannot be required`);
        const after: FieldDef = { ...before, name, type, required, indexed, ...settings };
        orm.update(fields).set({ name, type, required, indexed, options: settings.options, config: settings.config }).where(eq(fields.id, fieldId)).run();
        invalidate();
        const valuesChange = typeChanged
          || JSON.stringify(settings.options) !== JSON.stringify(before.options)
          || JSON.stringify(settings.config) !== JSON.stringify(before.config);
        if (valuesChange) {
          convertValues(baseId, before, after);
          if (fieldType(before.type).searchable || fieldType(after.type).searchable) {
            store.resetSearch(tableId);
            onSearchReset(tableId);
          }
        }
        else if (indexed !== before.indexed) store.setIndexed(tableId, after, indexed);
        if (valuesChange || name !== before.name) store.forgetStatements();
        return after;
      });
    },

    async deleteField(tableId: string, fieldId: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        const field = getField(tableId, fieldId);
        store.dropField(tableId, field);
        orm.delete(fields).where(eq(fields.id, fieldId)).run();
        invalidate();
        if (fieldType(field.type).searchable) {
          store.resetSearch(tableId);
          onSearchReset(tableId);
        }
        return { id: fieldId, deleted: true as const };
      });
    },

    fieldCount(tableId: string) {
      return orm.select({ n: count() }).from(fields).where(eq(fields.tableId, tableId)).get()!.n;
    },
  };
}

export type FieldService = ReturnType<typeof createFieldService>;
