// The read-only look of a cell: cellDisplay() turns a value into a small description the grid template renders inline (no component per cell), and CellView renders one for editors' previews and the drawer's computed values.
import { h, type FunctionalComponent } from 'vue';
import { lookupElementField } from '../computedFields';
import { elementText, formatDate, formatNumber, isComputed, valueType, type FieldDef, type MemberInfo } from '../fieldTypes';
import { linkLabels } from '../linkLabels';
import { chipClass, colorFor, formatDateTime, initials } from '../../ui/format';

export type CellDisplay =
  | { k: 'empty' }
  | { k: 'cb'; on: boolean; ro?: boolean }
  | { k: 'text'; t: string; cls?: string }
  | { k: 'chips'; items: Array<{ t: string; cls: string; title?: string }> }
  | { k: 'user'; name: string; initials: string; color: string; title: string }
  | { k: 'stars'; on: string; off: string; title: string };

const EMPTY: CellDisplay = { k: 'empty' };

/** A lookup's elements as chips, each in the look of the field it comes from. */
function lookupChips(field: FieldDef, value: unknown, members: Map<string, MemberInfo>): CellDisplay {
  const items = Array.isArray(value) ? value : [value];
  if (!items.length) return EMPTY;
  const from = lookupElementField(field);
  return {
    k: 'chips',
    items: items.map((v) => {
      const t = elementText(v, from, members);
      if (from?.type === 'link') return { t, cls: 'link', title: String(v) };
      if (from?.type === 'single_select' || from?.type === 'multi_select') return { t, cls: chipClass(String(v), from.options) };
      return { t, cls: 'lk', title: t };
    }),
  };
}

export function cellDisplay(field: FieldDef, value: unknown, members: Map<string, MemberInfo>): CellDisplay {
  if (field.type === 'lookup') return value === null || value === undefined ? EMPTY : lookupChips(field, value, members);
  // A formula, rollup or count looks like its result type.
  const t = valueType(field);
  if (t === 'checkbox') {
    // A computed boolean that could not be computed is blank, not unchecked.
    if (isComputed(field)) return value === null || value === undefined ? EMPTY : { k: 'cb', on: !!value, ro: true };
    return { k: 'cb', on: !!value };
  }
  if (value === null || value === undefined || value === '') return EMPTY;
  switch (t) {
    case 'number':
    case 'autonumber':
      return { k: 'text', t: formatNumber(value, field), cls: 'num' };
    case 'date':
      return { k: 'text', t: formatDate(String(value)), cls: 'ellipsis' };
    case 'created_time':
    case 'last_modified_time':
      return { k: 'text', t: formatDateTime(String(value)), cls: 'muted ellipsis' };
    case 'single_select':
      return { k: 'chips', items: [{ t: String(value), cls: chipClass(String(value), field.options) }] };
    case 'multi_select':
      return { k: 'chips', items: (Array.isArray(value) ? value : [value]).map((v) => ({ t: String(v), cls: chipClass(String(v), field.options) })) };
    case 'link':
      return { k: 'chips', items: (Array.isArray(value) ? value : [value]).map((id) => ({ t: linkLabels.get(String(id)) ?? String(id), cls: 'link', title: String(id) })) };
    case 'user': {
      const m = members.get(String(value));
      const name = m?.name ?? String(value);
      return { k: 'user', name, initials: initials(name), color: colorFor(String(value)), title: m?.email ?? String(value) };
    }
    case 'rating': {
      const max = Number(field.config?.max ?? 5);
      const n = Math.min(Number(value) || 0, max);
      return { k: 'stars', on: '★'.repeat(n), off: '★'.repeat(Math.max(max - n, 0)), title: `${n} of ${max}` };
    }
    case 'long_text':
      return { k: 'text', t: String(value).split('\n', 1)[0], cls: 'ellipsis' };
    case 'url':
      return { k: 'text', t: String(value), cls: 'ellipsis url' };
    default:
      return { k: 'text', t: typeof value === 'object' ? JSON.stringify(value) : String(value), cls: 'ellipsis' };
  }
}

/** One cell's look as a component (used for the value preview of list editors). */
export const CellView: FunctionalComponent<{ field: FieldDef; value: unknown; members: Map<string, MemberInfo> }> = ({ field, value, members }) => {
  const d = cellDisplay(field, value, members);
  switch (d.k) {
    case 'cb': return h('span', { class: ['cb', d.on ? 'on' : '', d.ro ? 'ro' : ''], role: 'checkbox', 'aria-checked': d.on, 'aria-readonly': d.ro ? 'true' : undefined }, d.on ? '✓' : '');
    case 'text': return h('span', { class: d.cls }, d.t);
    case 'chips': return h('span', { class: 'chips' }, d.items.map((c) => h('span', { class: ['chip', c.cls], title: c.title }, c.t)));
    case 'user': return h('span', { class: 'user-cell', title: d.title }, [h('span', { class: 'avatar xs', style: { background: d.color } }, d.initials), h('span', { class: 'ellipsis' }, d.name)]);
    case 'stars': return h('span', { class: 'stars', title: d.title }, [h('span', { class: 'on' }, d.on), h('span', { class: 'off' }, d.off)]);
    default: return null;
  }
};
CellView.props = ['field', 'value', 'members'];
