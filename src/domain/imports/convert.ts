// Cell texts of an imported file into stored values: the text becomes the value an API write would carry (a number,
// a boolean, a list), then goes through the field type's own `toStored`, the code every API write runs.
import type { RowWrite } from '../../db/store.js';
import { ValueError, type FieldDef, type ValueContext } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { newId } from '../../ids.js';
import type { RowError } from '../jobs.js';

/** One column of the file written to one field. */
export interface ColumnTarget { index: number; column: string; field: FieldDef }
export interface ImportRow { row: number; cells: string[] }

const TRUE = new Set(['true', 'yes', '1', 'x', 'checked', 'on']);
const FALSE = new Set(['false', 'no', '0', 'unchecked', 'off']);

/** The API value a cell's text stands for (export writes values this way: lists joined by ", "). */
export function valueOfText(field: FieldDef, text: string): unknown {
  const t = text.trim();
  if (t === '') return null;
  switch (field.type) {
    case 'number':
    case 'rating': {
      const n = Number(t);
      if (!Number.isFinite(n)) throw new ValueError(`expected a number, got "${t.length > 40 ? `${t.slice(0, 40)}...` : t}"`);
      return n;
    }
    case 'checkbox': {
      const l = t.toLowerCase();
      if (TRUE.has(l)) return true;
      if (FALSE.has(l)) return false;
      throw new ValueError(`expected true or false, got "${t}"`);
    }
    case 'multi_select':
    case 'link':
      return t.split(/\s*,\s*/).filter((s) => s !== '');
    case 'text':
    case 'long_text':
      return text; // kept as written, spaces and all
    default:
      return t;
  }
}

/**
 * Converts rows into record writes; a row with a value that does not convert is left out and reported. Link targets
 * are collected per row for one existence check per chunk.
 */
export function convertRows(rows: ImportRow[], targets: ColumnTarget[], fields: FieldDef[], ctx: ValueContext) {
  const writes: Array<RowWrite & { row: number }> = [];
  const errors: RowError[] = [];
  const links: Array<{ write: number; field: FieldDef; column: string; ids: string[] }> = [];
  const required = fields.filter((f) => f.required && !typeOfField(f).readOnly);
  for (const r of rows) {
    if (r.cells.every((c) => c === '')) continue; // an empty line is no record
    const values = new Map<string, unknown>();
    let failed: RowError | undefined;
    const rowLinks: typeof links = [];
    for (const t of targets) {
      const text = r.cells[t.index] ?? '';
      try {
        const value = valueOfText(t.field, text);
        const stored = value === null ? null : typeOfField(t.field).toStored(value, t.field, ctx);
        if (stored === null && t.field.required) throw new ValueError('is required');
        if (t.field.type === 'link' && stored) rowLinks.push({ write: writes.length, field: t.field, column: t.column, ids: stored as string[] });
        values.set(t.field.id, t.field.type === 'link' ? (stored ?? []) : stored);
      } catch (e) {
        if (!(e instanceof ValueError)) throw e;
        failed = { row: r.row, column: t.column, field: t.field.name, message: `field "${t.field.name}": ${e.message}` };
        break;
      }
    }
    if (!failed) {
      const missing = required.find((f) => !values.has(f.id));
      if (missing) failed = { row: r.row, column: null, field: missing.name, message: `field "${missing.name}" is required and no column is mapped to it` };
    }
    if (failed) {
      errors.push(failed);
      continue;
    }
    links.push(...rowLinks);
    writes.push({ id: newId('rec'), values, row: r.row });
  }
  return { writes, errors, links };
}
