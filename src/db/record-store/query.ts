// Compiles filter groups and sort keys to SQL over the record table `t`, asking each field's type for its SQL.
import type { SqlParams } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import type { RecordDialect } from '../sql-client.js';
import { linkTable, sortTermsOf, valueExpr } from './context.js';
import type { Condition, ConditionGroup, SortKey } from './types.js';

/** `prefix` is the schema of the table's base, which its link fields' junction tables share. */
function compileCondition(c: Condition, params: SqlParams, prefix: string): string {
  const type = typeOfField(c.field);
  const col = type.storage === 'link' ? linkTable(c.field.id, prefix) : valueExpr(c.field, type);
  return type.filterSql({ op: c.op, value: c.value, col, recordId: 't._id' }, params);
}

/** The condition of a group; the dialect's `true` for an empty one. */
export function compileGroup(g: ConditionGroup, params: SqlParams, prefix: string): string {
  if (g.conditions.length === 0) return params.dialect.true;
  const parts = g.conditions.map((c) => ('conjunction' in c ? compileGroup(c, params, prefix) : compileCondition(c, params, prefix)));
  return `(${parts.join(g.conjunction === 'and' ? ' AND ' : ' OR ')})`;
}

/** ORDER BY terms of one sort key. */
export function sortExpr(key: SortKey, d: RecordDialect): string {
  const type = typeOfField(key.field);
  return sortTermsOf(type, valueExpr(key.field, type), key.direction, d);
}
