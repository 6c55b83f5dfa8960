// The filter and sort state of a table view and their conversion to the contract's `filter` and `sort` JSON (section 4).
import { lookupElementField } from './computedFields';
import { emptyFilterValue, filterOperand, operatorsFor, valueKind, valueType, type FieldDef, type Operator } from './fieldTypes';

export interface FilterCondition {
  kind: 'cond';
  key: number;
  fieldId: string;
  op: Operator;
  value: unknown;
}
export interface FilterGroup {
  kind: 'group';
  key: number;
  conjunction: 'and' | 'or';
  items: FilterCondition[];
}
export interface FilterState {
  conjunction: 'and' | 'or';
  items: Array<FilterCondition | FilterGroup>;
}
export interface SortKey {
  fieldId: string;
  direction: 'asc' | 'desc';
}

let seq = 0;
export const emptyFilter = (): FilterState => ({ conjunction: 'and', items: [] });

export function newCondition(field: FieldDef): FilterCondition {
  const op = defaultOperator(field);
  return { kind: 'cond', key: ++seq, fieldId: field.id, op, value: emptyFilterValue(valueKind(valueType(field), op)) };
}
export function newGroup(field: FieldDef): FilterGroup {
  return { kind: 'group', key: ++seq, conjunction: 'or', items: [newCondition(field)] };
}
function defaultOperator(f: FieldDef): Operator {
  const type = valueType(f);
  const ops = operatorsFor(type);
  if (['text', 'long_text', 'email', 'url', 'phone'].includes(type)) return 'contains';
  if (type === 'multi_select' || type === 'link' || type === 'lookup') return 'has_any';
  return ops[0];
}

/** Points a condition at another field: keeps the operator when it still applies, resets the value. */
export function changeField(c: FilterCondition, field: FieldDef) {
  c.fieldId = field.id;
  if (!operatorsFor(valueType(field)).includes(c.op)) c.op = defaultOperator(field);
  c.value = emptyFilterValue(valueKind(valueType(field), c.op));
}
/** Changes the operator: keeps the value when its kind stays the same. */
export function changeOperator(c: FilterCondition, field: FieldDef, op: Operator) {
  const before = valueKind(valueType(field), c.op);
  c.op = op;
  const after = valueKind(valueType(field), op);
  if (before !== after) c.value = emptyFilterValue(after);
}

function conditionJson(c: FilterCondition, byId: Map<string, FieldDef>) {
  const f = byId.get(c.fieldId);
  if (!f || !operatorsFor(valueType(f)).includes(c.op)) return undefined;
  const kind = valueKind(valueType(f), c.op);
  let value = filterOperand(kind, c.value);
  if (value === undefined) return undefined;
  if (f.type === 'lookup' && Array.isArray(value)) value = value.map((v) => lookupOperand(f, v));
  return kind === 'none' ? { field: f.name, operator: c.op } : { field: f.name, operator: c.op, value };
}

/** A typed value of a lookup filter as its elements are: a number or a boolean when the looked-up field holds those. */
function lookupOperand(f: FieldDef, v: unknown): unknown {
  const from = lookupElementField(f);
  if (!from || typeof v !== 'string') return v;
  const type = valueType(from);
  if (['number', 'rating', 'autonumber'].includes(type) && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (type === 'checkbox' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  return v;
}

/** The contract's filter object, leaving out conditions not filled in yet; null when nothing filters. */
export function toFilterJson(state: FilterState, fields: FieldDef[]) {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const conditions: unknown[] = [];
  for (const item of state.items) {
    if (item.kind === 'cond') {
      const c = conditionJson(item, byId);
      if (c) conditions.push(c);
    } else {
      const inner = item.items.map((c) => conditionJson(c, byId)).filter(Boolean);
      if (inner.length) conditions.push({ conjunction: item.conjunction, conditions: inner });
    }
  }
  return conditions.length ? { conjunction: state.conjunction, conditions } : null;
}

/** How many conditions are complete (the number shown on the filter button). */
export function activeConditionCount(state: FilterState, fields: FieldDef[]) {
  const byId = new Map(fields.map((f) => [f.id, f]));
  let n = 0;
  for (const item of state.items) {
    const list = item.kind === 'cond' ? [item] : item.items;
    n += list.filter((c) => conditionJson(c, byId)).length;
  }
  return n;
}

/** Field ids that take part in the filter (for highlighting columns). */
export function filterFieldIds(state: FilterState) {
  const ids = new Set<string>();
  for (const item of state.items) for (const c of item.kind === 'cond' ? [item] : item.items) ids.add(c.fieldId);
  return ids;
}

/** Drops conditions and sort keys whose field was deleted or changed type past its operator. */
export function pruneView(state: FilterState, sort: SortKey[], fields: FieldDef[]) {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const keep = (c: FilterCondition) => {
    const f = byId.get(c.fieldId);
    if (!f) return false;
    if (!operatorsFor(valueType(f)).includes(c.op)) changeField(c, f);
    return true;
  };
  state.items = state.items.filter((item) => {
    if (item.kind === 'cond') return keep(item);
    item.items = item.items.filter(keep);
    return item.items.length > 0;
  });
  const sorted = sort.filter((k) => byId.has(k.fieldId) && byId.get(k.fieldId)!.type !== 'link');
  sort.splice(0, sort.length, ...sorted);
}

export const toSortJson = (sort: SortKey[], fields: FieldDef[]) => {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const keys = sort.filter((k) => byId.has(k.fieldId)).map((k) => ({ field: byId.get(k.fieldId)!.name, direction: k.direction }));
  return keys.length ? keys : null;
};

/** The filter and sort of each table opened since the app loaded (a grid view's own, once its view is read, take their place). */
export const viewMemory = new Map<string, { filter: FilterState; sort: SortKey[] }>();
