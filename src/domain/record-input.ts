// Record input: one batch item's values validated into stored form by the field types, and one existence check per linked table.
import type { UnitOfWork } from '../db/store.js';
import { AppError, type ErrorDetail } from '../errors.js';
import { ValueError, type FieldDef, type ValueContext } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';
import type { fieldResolver } from './record-query.js';

/** Link targets of a batch by link field, with the item that named them. */
export type LinkTargets = Map<FieldDef, Array<{ index?: number; ids: string[] }>>;

/** An error about one item of a batch; `index` is absent for single-record calls. */
export function itemError(code: 'BAD_REQUEST' | 'NOT_FOUND', index: number | undefined, message: string, field?: string): AppError {
  const where = index === undefined ? '' : `records[${index}]: `;
  const detail: ErrorDetail = { message, ...(index !== undefined ? { index } : {}), ...(field ? { field } : {}) };
  return new AppError(code, `${where}${message}`, { details: [detail] });
}

/**
 * Validates one item's values (keyed by field name or id) into stored form.
 * `index` names the batch item in errors; link targets are collected for one existence check per batch.
 */
export function prepare(
  fields: FieldDef[], resolve: ReturnType<typeof fieldResolver>, ctx: ValueContext,
  input: unknown, mode: 'create' | 'update', index: number | undefined, linkTargets: LinkTargets,
): Map<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw itemError('BAD_REQUEST', index, '"fields" must be an object of field values');
  const values = new Map<string, unknown>();
  for (const [key, value] of Object.entries(input)) {
    const field = resolve(key);
    if (!field) throw itemError('BAD_REQUEST', index, `unknown field "${key}"`, key);
    const type = typeOfField(field);
    if (type.readOnly) throw itemError('BAD_REQUEST', index, `field "${field.name}" is read-only (${field.type})`, field.name);
    if (values.has(field.id)) throw itemError('BAD_REQUEST', index, `field "${field.name}" is given twice`, field.name);
    let stored: unknown = null;
    if (value !== null) {
      try {
        stored = type.toStored(value, field, ctx);
      } catch (e) {
        if (e instanceof ValueError) throw itemError('BAD_REQUEST', index, `field "${field.name}": ${e.message}`, field.name);
        throw e;
      }
    }
    if (stored === null && field.required) throw itemError('BAD_REQUEST', index, `field "${field.name}" is required`, field.name);
    if (field.type === 'link') {
      const ids = (stored as string[] | null) ?? [];
      stored = ids;
      if (ids.length) linkTargets.set(field, [...(linkTargets.get(field) ?? []), { index, ids }]);
    }
    values.set(field.id, stored);
  }
  if (mode === 'create') {
    for (const f of fields) {
      if (f.required && !values.has(f.id)) throw itemError('BAD_REQUEST', index, `field "${f.name}" is required`, f.name);
    }
  }
  return values;
}

/** One query per linked table: every linked record must exist. */
export async function checkLinks(tx: UnitOfWork, linkTargets: LinkTargets) {
  for (const [field, uses] of linkTargets) {
    const target = field.config.table_id as string;
    const found = await tx.records.existing(target, [...new Set(uses.flatMap((u) => u.ids))]);
    for (const use of uses) {
      const missing = use.ids.find((id) => !found.has(id));
      if (missing) throw itemError('BAD_REQUEST', use.index, `field "${field.name}": record ${missing} does not exist in the linked table`, field.name);
    }
  }
}
