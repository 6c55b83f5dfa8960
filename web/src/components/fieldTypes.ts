// Field types as the web app knows them (contract sections 4 and 12): labels, icons, read-only and computed types, filter operators per type (a computed field's by its result), value formatting.
import { formatDateTime } from '../ui/format';
import { lookupElementField } from './computedFields';
import { linkLabels } from './linkLabels';

export type FieldTypeName =
  | 'text' | 'long_text' | 'number' | 'date' | 'single_select' | 'multi_select' | 'checkbox' | 'user' | 'link'
  | 'email' | 'url' | 'phone' | 'rating' | 'created_time' | 'last_modified_time' | 'autonumber'
  | 'formula' | 'lookup' | 'rollup' | 'count' | 'attachment';

/** What a formula or rollup evaluates to (`config.result_type`, set by the server). */
export type ResultType = 'number' | 'text' | 'boolean' | 'date';

export interface FieldDef {
  id: string;
  tableId: string;
  name: string;
  type: FieldTypeName;
  options: string[] | null;
  config: Record<string, any>;
  required: boolean;
  indexed: boolean;
  /** A computed field still being computed in the background: how many records are done; null once current. */
  computing?: { done: number; total: number } | null;
}

export interface MemberInfo {
  userId: string;
  name: string;
  email: string;
  role: string;
}

export interface RecordRow {
  id: string;
  fields: Record<string, any>;
  createdAt: string;
  updatedAt: string;
  createdBy?: string | null;
  updatedBy?: string | null;
}

export const FIELD_TYPE_LIST: Array<{ type: FieldTypeName; label: string; icon: string; hint: string; computed?: boolean }> = [
  { type: 'text', label: 'Single line text', icon: 'Aa', hint: 'A short piece of text' },
  { type: 'long_text', label: 'Long text', icon: '¶', hint: 'Paragraphs of text' },
  { type: 'number', label: 'Number', icon: '#', hint: 'Integers or decimals, with optional precision' },
  { type: 'date', label: 'Date', icon: '▦', hint: 'A date, or a date with a time' },
  { type: 'single_select', label: 'Single select', icon: '◉', hint: 'One choice from a list' },
  { type: 'multi_select', label: 'Multiple select', icon: '☰', hint: 'Several choices from a list' },
  { type: 'checkbox', label: 'Checkbox', icon: '☑', hint: 'Yes or no' },
  { type: 'user', label: 'User', icon: '☺', hint: 'A member of this base' },
  { type: 'link', label: 'Link to another record', icon: '⇄', hint: 'Records of another table of this base' },
  { type: 'email', label: 'Email', icon: '@', hint: 'An email address' },
  { type: 'url', label: 'URL', icon: '↗', hint: 'A web address' },
  { type: 'phone', label: 'Phone number', icon: '☏', hint: 'A phone number' },
  { type: 'rating', label: 'Rating', icon: '★', hint: 'Stars from 0 to a maximum' },
  { type: 'attachment', label: 'Attachment', icon: '▣', hint: 'Files and images, with thumbnails' },
  { type: 'created_time', label: 'Created time', icon: '◷', hint: 'Set when the record is created' },
  { type: 'last_modified_time', label: 'Last modified time', icon: '◶', hint: 'Set when the record changes' },
  { type: 'autonumber', label: 'Autonumber', icon: '№', hint: 'A number counting up' },
  { type: 'formula', label: 'Formula', icon: 'ƒx', hint: 'Computed from other fields of the record, e.g. {Price} * {Qty}', computed: true },
  { type: 'lookup', label: 'Lookup', icon: '⇢', hint: 'The values of a field of the linked records', computed: true },
  { type: 'rollup', label: 'Rollup', icon: 'Σ', hint: 'One value summarising a field of the linked records: sum, average, count…', computed: true },
  { type: 'count', label: 'Count', icon: '#⇄', hint: 'How many records a link field holds', computed: true },
];
const META = new Map(FIELD_TYPE_LIST.map((t) => [t.type, t]));
export const typeLabel = (t: string) => META.get(t as FieldTypeName)?.label ?? t;
export const typeIcon = (t: string) => META.get(t as FieldTypeName)?.icon ?? '?';

/** Types whose values the service computes from other fields (contract section 12). */
export const COMPUTED_TYPES = new Set<FieldTypeName>(['formula', 'lookup', 'rollup', 'count']);
export const isComputed = (f: Pick<FieldDef, 'type'>) => COMPUTED_TYPES.has(f.type);
/** Types nobody writes: the grid opens no editor on them and a write is refused. */
export const READ_ONLY_TYPES = new Set<FieldTypeName>(['created_time', 'last_modified_time', 'autonumber', ...COMPUTED_TYPES]);
export const isReadOnly = (f: Pick<FieldDef, 'type'>) => READ_ONLY_TYPES.has(f.type);
/** Types whose values can be sorted (the server refuses sorting a link; computed fields sort by their result). */
export const isSortable = (f: FieldDef) => f.type !== 'link' && f.type !== 'attachment';

const RESULT_AS: Record<ResultType, FieldTypeName> = { number: 'number', text: 'text', boolean: 'checkbox', date: 'date' };
/** A formula's or rollup's result type (a rollup without one is a number, as on the server). */
export function resultTypeOf(f: Pick<FieldDef, 'type' | 'config'>): ResultType | null {
  const r = f.config?.result_type;
  if (r === 'number' || r === 'text' || r === 'boolean' || r === 'date') return r;
  if (f.type === 'rollup' || f.type === 'count') return 'number';
  if (f.type === 'formula') return 'text';
  return null;
}
/**
 * The type a field's values look, filter and sort like: a formula or rollup as its result type (a boolean as a checkbox),
 * a count as a number, every other type (lookup included) as itself.
 */
export function valueType(f: Pick<FieldDef, 'type' | 'config'>): FieldTypeName {
  if (f.type === 'formula' || f.type === 'rollup' || f.type === 'count') return RESULT_AS[resultTypeOf(f)!];
  return f.type;
}

export type Operator =
  | 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'not_contains' | 'starts_with' | 'ends_with'
  | 'in' | 'not_in' | 'has_any' | 'has_all' | 'has_none' | 'is_empty' | 'is_not_empty';

const TEXTY: FieldTypeName[] = ['text', 'long_text', 'email', 'url', 'phone'];
const ORDERED: FieldTypeName[] = ['number', 'rating', 'autonumber', 'date', 'created_time', 'last_modified_time', ...TEXTY];
const IN_TYPES: FieldTypeName[] = [...TEXTY, 'number', 'single_select', 'user'];
const SET_TYPES: FieldTypeName[] = ['multi_select', 'link', 'user', 'lookup'];
/** Types filtered only as sets of values. */
const ONLY_SETS: FieldTypeName[] = ['multi_select', 'link', 'lookup'];

/**
 * The operators valid for a field type, in menu order (the contract's table). Pass a computed field's `valueType`:
 * a number formula, rollup or count filters like a number, a lookup like a set.
 */
export function operatorsFor(type: FieldTypeName): Operator[] {
  if (type === 'attachment') return ['is_empty', 'is_not_empty'];
  const ops: Operator[] = [];
  if (!ONLY_SETS.includes(type)) ops.push('eq', 'neq');
  if (TEXTY.includes(type)) ops.push('contains', 'not_contains', 'starts_with', 'ends_with');
  if (ORDERED.includes(type)) ops.push('gt', 'gte', 'lt', 'lte');
  if (IN_TYPES.includes(type)) ops.push('in', 'not_in');
  if (SET_TYPES.includes(type)) ops.push('has_any', 'has_all', 'has_none');
  ops.push('is_empty', 'is_not_empty');
  return ops;
}

const DATE_TYPES = new Set<FieldTypeName>(['date', 'created_time', 'last_modified_time']);
export function operatorLabel(op: Operator, type: FieldTypeName): string {
  const dateish = DATE_TYPES.has(type);
  switch (op) {
    case 'eq': return type === 'checkbox' ? 'is' : '=';
    case 'neq': return type === 'checkbox' ? 'is not' : '≠';
    case 'gt': return dateish ? 'is after' : '>';
    case 'gte': return dateish ? 'is on or after' : '≥';
    case 'lt': return dateish ? 'is before' : '<';
    case 'lte': return dateish ? 'is on or before' : '≤';
    case 'contains': return 'contains';
    case 'not_contains': return 'does not contain';
    case 'starts_with': return 'starts with';
    case 'ends_with': return 'ends with';
    case 'in': return 'is any of';
    case 'not_in': return 'is none of';
    case 'has_any': return 'has any of';
    case 'has_all': return 'has all of';
    case 'has_none': return 'has none of';
    case 'is_empty': return 'is empty';
    case 'is_not_empty': return 'is not empty';
  }
}

export const NO_VALUE_OPS = new Set<Operator>(['is_empty', 'is_not_empty']);
export const ARRAY_OPS = new Set<Operator>(['in', 'not_in', 'has_any', 'has_all', 'has_none']);

/** How a filter value is entered for a field type and operator. */
export type ValueKind = 'none' | 'text' | 'number' | 'date' | 'bool' | 'option' | 'options' | 'user' | 'users' | 'list' | 'numbers' | 'ids';
export function valueKind(type: FieldTypeName, op: Operator): ValueKind {
  if (NO_VALUE_OPS.has(op)) return 'none';
  const many = ARRAY_OPS.has(op);
  switch (type) {
    case 'checkbox': return 'bool';
    case 'number': case 'rating': case 'autonumber': return many ? 'numbers' : 'number';
    case 'date': case 'created_time': case 'last_modified_time': return 'date';
    case 'single_select': return many ? 'options' : 'option';
    case 'multi_select': return 'options';
    case 'user': return many ? 'users' : 'user';
    case 'link': return 'ids';
    case 'lookup': return 'list';
    default: return many ? 'list' : 'text';
  }
}

/** The empty value a filter condition starts with for a kind. */
export function emptyFilterValue(kind: ValueKind): unknown {
  if (kind === 'options' || kind === 'users') return [];
  if (kind === 'bool') return true;
  return '';
}

/** Converts what the filter row holds into the contract's operand, or undefined when it is not complete yet. */
export function filterOperand(kind: ValueKind, raw: unknown): unknown {
  const splitList = (s: unknown) => String(s ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  switch (kind) {
    case 'none': return null;
    case 'bool': return raw === true || raw === 'true';
    case 'number': {
      if (raw === '' || raw === null || raw === undefined) return undefined;
      const n = Number(raw);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'numbers': {
      const parts = splitList(raw).map(Number);
      return parts.length && parts.every(Number.isFinite) ? parts : undefined;
    }
    case 'list': case 'ids': {
      const parts = splitList(raw);
      return parts.length ? parts : undefined;
    }
    case 'options': case 'users':
      return Array.isArray(raw) && raw.length ? raw : undefined;
    default:
      return raw === '' || raw === null || raw === undefined ? undefined : raw;
  }
}

/** A date-time value (not a date-only one). */
export const isDateTime = (v: unknown) => typeof v === 'string' && v.includes('T');

export function formatDate(v: string | null | undefined) {
  if (!v) return '';
  if (!isDateTime(v)) {
    const [y, m, d] = v.split('-').map(Number);
    if (!y || !m || !d) return v;
    return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
  }
  return formatDateTime(v);
}

export function formatNumber(v: unknown, f: FieldDef) {
  if (typeof v !== 'number') return v === null || v === undefined ? '' : String(v);
  const p = f.config?.precision;
  return typeof p === 'number' ? v.toLocaleString('en-US', { minimumFractionDigits: p, maximumFractionDigits: p }) : v.toLocaleString('en-US', { maximumFractionDigits: 10 });
}

/** Plain text of a value (for titles, copy and the read-only cells); a computed value as its result type. */
export function textOf(v: unknown, f: FieldDef, members?: Map<string, MemberInfo>): string {
  if (v === null || v === undefined) return '';
  if (f.type === 'lookup') return (Array.isArray(v) ? v : [v]).map((x) => elementText(x, lookupElementField(f), members)).join(', ');
  switch (valueType(f)) {
    case 'number': case 'autonumber': return formatNumber(v, f);
    case 'date': case 'created_time': case 'last_modified_time': return formatDate(String(v));
    case 'checkbox': return v ? 'Yes' : 'No';
    case 'user': return members?.get(String(v))?.name ?? String(v);
    case 'multi_select': case 'link': return Array.isArray(v) ? v.join(', ') : String(v);
    case 'rating': return '★'.repeat(Number(v) || 0);
    default: return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
}

/** The text of one element of a lookup, by the field it comes from (plain text while that field is unknown). */
export function elementText(v: unknown, from: FieldDef | null, members?: Map<string, MemberInfo>): string {
  if (v === null || v === undefined) return '';
  if (!from) return typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (from.type === 'link') return linkLabels.get(String(v)) ?? String(v);
  if (from.type === 'multi_select') return String(v);
  return textOf(v, from, members);
}

/** Compares two API values for "did the edit change anything". */
export function sameValue(a: unknown, b: unknown) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The value of a field for a `datetime-local` input, in the browser's time zone. */
export function toLocalInput(iso: string) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
