// Computes the values of one computed field for a slice of records: the inputs of the whole slice are read in a few
// queries (the records, then the linked records), never one query per record.
import type { UnitOfWork } from '../../db/store.js';
import type { FieldDef } from '../../fields/field-type.js';
import { compileFormula, type CompiledFormula } from '../../fields/formula/index.js';
import { storedOfResult, type RollupFunction } from '../../fields/types/computed.js';
import { apiValue } from '../record-values.js';
import { formulaTypeOf } from './definitions.js';
import type { ComputedGraph } from './graph.js';

/** A record's new stored value of the field, beside the one it holds. */
export interface ComputedValue {
  id: string;
  stored: unknown;
  old: unknown;
}

const formulas = new WeakMap<ComputedGraph, Map<string, CompiledFormula>>();

/** The formula of `field` compiled once per graph (a schema change builds a new graph). */
function formulaOf(graph: ComputedGraph, field: FieldDef): CompiledFormula {
  let byField = formulas.get(graph);
  if (!byField) formulas.set(graph, (byField = new Map()));
  let compiled = byField.get(field.id);
  if (!compiled) {
    const refs = [...graph.byId.values()].filter((f) => f.tableId === field.tableId && f.id !== field.id).flatMap((f) => {
      const type = formulaTypeOf(f);
      return type ? [{ id: f.id, name: f.name, type }] : [];
    });
    byField.set(field.id, (compiled = compileFormula(String(field.config.expression), refs)));
  }
  return compiled;
}

const isBlank = (v: unknown) => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
const asTime = (v: unknown) => (typeof v === 'string' ? Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v) : NaN);

/** Contract section 12's rollup functions over the linked values (flattened, blanks removed). */
export function rollupOf(fn: RollupFunction, values: unknown[], resultType: string): unknown {
  const numbers = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  switch (fn) {
    case 'sum': return numbers.reduce((a, b) => a + b, 0);
    case 'avg': return numbers.length ? numbers.reduce((a, b) => a + b, 0) / numbers.length : null;
    case 'count': return numbers.length;
    case 'counta': return values.length;
    case 'concat': return values.length ? values.map((v) => (typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : String(v))).join(', ') : null;
    case 'and': return values.length ? values.every((v) => v === true) : null;
    case 'or': return values.length ? values.some((v) => v === true) : null;
    case 'min':
    case 'max': {
      const pick = fn === 'min' ? (a: number, b: number) => b < a : (a: number, b: number) => b > a;
      if (resultType === 'date') {
        const dated = values.filter((v) => !Number.isNaN(asTime(v)));
        return dated.length ? dated.reduce((a, b) => (pick(asTime(a), asTime(b)) ? b : a)) : null;
      }
      return numbers.length ? numbers.reduce((a, b) => (pick(a, b) ? b : a)) : null;
    }
  }
}

/** The new values of computed field `field` for the records `ids` of its table (those that exist). */
export async function computeValues(tx: UnitOfWork, graph: ComputedGraph, field: FieldDef, ids: string[]): Promise<ComputedValue[]> {
  const table = field.tableId;
  if (field.type === 'formula') {
    const formula = formulaOf(graph, field);
    const inputs = formula.references.map((id) => graph.byId.get(id)!);
    const rows = await tx.records.getMany(table, [...inputs, field], ids);
    return rows.map((row) => {
      const value = formula.evaluate((id) => {
        const input = graph.byId.get(id);
        return input ? apiValue(input, row) : null;
      });
      return { id: row.id, stored: storedOfResult(field, value), old: row.values[field.id] ?? null };
    });
  }
  const link = graph.byId.get(field.config.link_field as string)!;
  const rows = await tx.records.getMany(table, [link, field], ids);
  if (field.type === 'count') {
    return rows.map((row) => ({ id: row.id, stored: ((row.values[link.id] as string[] | undefined) ?? []).length, old: row.values[field.id] ?? null }));
  }
  // lookup and rollup: the linked records' values of the target field, read once for the whole slice.
  const target = graph.byId.get(field.config.field as string)!;
  const linked = [...new Set(rows.flatMap((row) => (row.values[link.id] as string[] | undefined) ?? []))];
  const valueOf = new Map((await tx.records.getMany(target.tableId, [target], linked)).map((r) => [r.id, apiValue(target, r)]));
  return rows.map((row) => {
    const values = ((row.values[link.id] as string[] | undefined) ?? [])
      .flatMap((id) => {
        const v = valueOf.get(id);
        return Array.isArray(v) ? v : [v];
      })
      .filter((v) => !isBlank(v));
    const result = field.type === 'lookup' ? values : rollupOf(field.config.function as RollupFunction, values, String(field.config.result_type));
    return { id: row.id, stored: storedOfResult(field, result), old: row.values[field.id] ?? null };
  });
}
