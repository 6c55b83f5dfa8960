// Parses the `filter` and `sort` grammar of contract section 4 into checked conditions for the record store.
import { badRequest } from '../errors.js';
import { OPERATORS, ValueError, type FieldDef, type Operator } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';
import type { Condition, ConditionGroup, SortKey } from '../db/store.js';

const MAX_DEPTH = 3;
const MAX_SORT_KEYS = 5;
const ARRAY_OPERATORS = new Set<Operator>(['in', 'not_in', 'has_any', 'has_all', 'has_none']);
const NO_VALUE_OPERATORS = new Set<Operator>(['is_empty', 'is_not_empty']);

const filterError = (message: string) => badRequest(`filter: ${message}`, [{ field: 'filter', message }]);
const sortError = (message: string) => badRequest(`sort: ${message}`, [{ field: 'sort', message }]);

/** Resolves a field by name or by id. */
export function fieldResolver(fields: FieldDef[]) {
  const byKey = new Map<string, FieldDef>();
  for (const f of fields) byKey.set(f.id, f);
  for (const f of fields) byKey.set(f.name, f);
  return (key: unknown) => (typeof key === 'string' ? byKey.get(key) : undefined);
}

function parseJson(raw: unknown, fail: (m: string) => Error): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw fail('not valid JSON');
  }
}

export function parseFilter(raw: unknown, fields: FieldDef[]): ConditionGroup | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const resolve = fieldResolver(fields);
  const value = parseJson(raw, filterError);

  function group(node: unknown, depth: number): ConditionGroup {
    if (depth > MAX_DEPTH) throw filterError(`groups nest deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(node)) return { conjunction: 'and', conditions: node.map((c) => item(c, depth)) };
    if (typeof node !== 'object' || node === null) throw filterError('expected an object with "conjunction" and "conditions", a condition, or an array of conditions');
    if ('field' in node) return { conjunction: 'and', conditions: [condition(node as Record<string, unknown>)] };
    const g = node as Record<string, unknown>;
    const conjunction = g.conjunction ?? 'and';
    if (conjunction !== 'and' && conjunction !== 'or') throw filterError(`conjunction must be "and" or "or", not ${JSON.stringify(conjunction)}`);
    if (!Array.isArray(g.conditions)) throw filterError('"conditions" must be an array');
    return { conjunction, conditions: g.conditions.map((c) => item(c, depth)) };
  }

  function item(node: unknown, depth: number): Condition | ConditionGroup {
    if (typeof node === 'object' && node !== null && !Array.isArray(node) && 'field' in node) return condition(node as Record<string, unknown>);
    return group(node, depth + 1);
  }

  function condition(c: Record<string, unknown>): Condition {
    const field = resolve(c.field);
    if (!field) throw filterError(`unknown field ${JSON.stringify(c.field)}`);
    const op = c.operator as Operator;
    if (!(OPERATORS as readonly string[]).includes(op)) throw filterError(`unknown operator ${JSON.stringify(c.operator)}`);
    const type = typeOfField(field);
    if (!type.operators.includes(op)) throw filterError(`operator "${op}" does not apply to ${field.type} field "${field.name}"`);
    if (NO_VALUE_OPERATORS.has(op)) return { field, op };
    const operand = (v: unknown) => {
      if (v === null || v === undefined) throw filterError(`operator "${op}" on "${field.name}" needs a value (use is_empty for empty cells)`);
      try {
        return type.filterOperand ? type.filterOperand(v, field) : type.toStored(v, field, { isBaseMember: () => true });
      } catch (e) {
        if (e instanceof ValueError) throw filterError(`value for "${field.name}": ${e.message}`);
        throw e;
      }
    };
    if (ARRAY_OPERATORS.has(op)) {
      if (!Array.isArray(c.value)) throw filterError(`operator "${op}" on "${field.name}" needs an array value`);
      return { field, op, value: c.value.map(operand) };
    }
    return { field, op, value: operand(c.value) };
  }

  return group(value, 1);
}

export function parseSort(raw: unknown, fields: FieldDef[]): SortKey[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const resolve = fieldResolver(fields);
  let value = parseJson(raw, sortError);
  if (value && typeof value === 'object' && !Array.isArray(value)) value = [value];
  if (!Array.isArray(value)) throw sortError('expected an array of {"field", "direction"}');
  if (value.length > MAX_SORT_KEYS) throw sortError(`at most ${MAX_SORT_KEYS} sort keys`);
  return value.map((k: unknown) => {
    if (typeof k !== 'object' || k === null) throw sortError('each key must be an object {"field", "direction"}');
    const { field: key, direction = 'asc' } = k as Record<string, unknown>;
    const field = resolve(key);
    if (!field) throw sortError(`unknown field ${JSON.stringify(key)}`);
    if (direction !== 'asc' && direction !== 'desc') throw sortError(`direction must be "asc" or "desc", not ${JSON.stringify(direction)}`);
    if (!typeOfField(field).sortTerms) throw sortError(`${field.type} field "${field.name}" cannot be sorted`);
    return { field, direction };
  });
}
