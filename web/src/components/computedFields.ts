// What the web app learns about computed fields (contract section 12) beyond their own definition: the field of the
// linked table a lookup or rollup reads (to format a lookup's elements and to type its filter values), the fields a
// formula can name, and the refresh of fields still being computed in the background.
import { reactive } from 'vue';
import { gql } from '../api';
import type { FieldDef } from './fieldTypes';
import { prefetchLabels, tableFields } from './linkLabels';

/** lookup or rollup field id → the field of the linked table it reads, once that table's fields have loaded. */
export const lookupTargets = reactive(new Map<string, FieldDef>());

/** The field a lookup's elements come from, through lookups of lookups; null while unknown. */
export function lookupElementField(f: FieldDef): FieldDef | null {
  let t = lookupTargets.get(f.id) ?? null;
  for (let hops = 0; t && t.type === 'lookup' && hops < 10; hops++) t = lookupTargets.get(t.id) ?? null;
  return t;
}

/**
 * Learns what the lookups and rollups of `fields` (one table's) read: loads each linked table's fields once (cached by
 * linkLabels), follows lookups of lookups, and prefetches record titles when the elements are links.
 */
export async function learnLookupTargets(fields: FieldDef[], depth = 0): Promise<void> {
  if (depth > 3) return;
  const jobs = fields
    .filter((f) => f.type === 'lookup' || f.type === 'rollup')
    .map(async (f) => {
      const link = fields.find((x) => x.id === f.config?.link_field);
      if (!link || link.type !== 'link') return;
      const linked = await tableFields(String(link.config.table_id)).catch(() => [] as FieldDef[]);
      const target = linked.find((x) => x.id === f.config?.field);
      if (!target) return;
      lookupTargets.set(f.id, target);
      if (target.type === 'link') prefetchLabels(String(target.config.table_id));
      if (target.type === 'lookup') await learnLookupTargets(linked, depth + 1);
    });
  await Promise.all(jobs);
}

/**
 * A field name as a formula writes it: `{Name}`, or `{field id}` for a name the braces cannot hold (contract section 12).
 */
export function formulaRef(f: Pick<FieldDef, 'id' | 'name'>): string {
  return f.name.includes('}') || !f.name.trim() ? `{${f.id}}` : `{${f.name}}`;
}

/** The 0-based character offset a formula error names ("… at position 3"), or null. */
export function errorPosition(message: string): number | null {
  const m = /\bat position (\d+)\b/.exec(message);
  return m ? Number(m[1]) : null;
}

/** The formula language's functions, for the hint under the expression box. */
export const FORMULA_FUNCTIONS: Array<{ name: string; sig: string }> = [
  { name: 'IF', sig: 'IF(condition, then, else)' },
  { name: 'AND', sig: 'AND(a, b, …)' },
  { name: 'OR', sig: 'OR(a, b, …)' },
  { name: 'NOT', sig: 'NOT(a)' },
  { name: 'BLANK', sig: 'BLANK()' },
  { name: 'SUM', sig: 'SUM(a, b, …)' },
  { name: 'AVERAGE', sig: 'AVERAGE(a, b, …)' },
  { name: 'MIN', sig: 'MIN(a, b, …)' },
  { name: 'MAX', sig: 'MAX(a, b, …)' },
  { name: 'ROUND', sig: 'ROUND(x, digits)' },
  { name: 'ABS', sig: 'ABS(x)' },
  { name: 'CONCAT', sig: 'CONCAT(a, b, …)' },
  { name: 'LEN', sig: 'LEN(text)' },
  { name: 'UPPER', sig: 'UPPER(text)' },
  { name: 'LOWER', sig: 'LOWER(text)' },
  { name: 'TRIM', sig: 'TRIM(text)' },
  { name: 'LEFT', sig: 'LEFT(text, n)' },
  { name: 'RIGHT', sig: 'RIGHT(text, n)' },
  { name: 'DATETIME_DIFF', sig: 'DATETIME_DIFF(a, b, "days"|"hours"|"minutes")' },
  { name: 'DATEADD', sig: 'DATEADD(date, n, unit)' },
];

export const ROLLUP_FUNCTIONS: Array<{ value: string; label: string; hint: string }> = [
  { value: 'sum', label: 'Sum', hint: 'Adds up the numbers' },
  { value: 'avg', label: 'Average', hint: 'The mean of the numbers' },
  { value: 'min', label: 'Minimum', hint: 'The smallest number, or the earliest date' },
  { value: 'max', label: 'Maximum', hint: 'The largest number, or the latest date' },
  { value: 'count', label: 'Count numbers', hint: 'How many of the values are numbers' },
  { value: 'counta', label: 'Count values', hint: 'How many values are not empty' },
  { value: 'concat', label: 'Join as text', hint: 'The values joined with commas' },
  { value: 'and', label: 'All true', hint: 'Checked when every value is true' },
  { value: 'or', label: 'Any true', hint: 'Checked when some value is true' },
];

const COMPUTING_FIELDS = 'query($t: ID!) { fields(tableId: $t, pageSize: 1000) { items { id computing config } } }';

/** Asks again how far the background computation of a table's fields has got. */
export async function loadComputing(tableId: string): Promise<Map<string, { computing: FieldDef['computing']; config: FieldDef['config'] }>> {
  const d = await gql<{ fields: { items: Array<Pick<FieldDef, 'id' | 'computing' | 'config'>> } }>(COMPUTING_FIELDS, { t: tableId });
  return new Map(d.fields.items.map((f) => [f.id, { computing: f.computing ?? null, config: f.config }]));
}
