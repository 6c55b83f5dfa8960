// Compiles filter groups and sort keys to SQL over the record table `t`, asking each field's type for its SQL.
import type { SqlParams } from '../../fields/field-type.js';
import { fieldType } from '../../fields/registry.js';
import { linkTable, valueExpr } from './context.js';
import type { Condition, ConditionGroup, SortKey } from './types.js';

function compileCondition(c: Condition, params: SqlParams): string {
  const type = fieldType(c.field.type);
  const col = type.storage === 'link' ? linkTable(c.field.id) : valueExpr(c.field, type);
  return type.filterSql({ op: c.op, value: c.value, col, recordId: 't._id' }, params);
}

/** The condition of a group; the dialect's `true` for an empty one. */
export function compileGroup(g: ConditionGroup, params: SqlParams): string {
  if (g.conditions.length === 0) return params.dialect.true;
  const parts = g.conditions.map((c) => ('conjunction' in c ? compileGroup(c, params) : compileCondition(c, params)));
  return `(${parts.join(g.conjunction === 'and' ? ' AND ' : ' OR ')})`;
}

/** ORDER BY terms of one sort key (record-query refuses keys on types that cannot be sorted). */
export function sortExpr(key: SortKey): string {
  const type = fieldType(key.field.type);
  return type.sortTerms!(valueExpr(key.field, type), key.direction === 'desc' ? 'DESC' : 'ASC');
}
