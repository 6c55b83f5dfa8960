// Column widths of the grid: defaults by field type, the open view's widths, widths dragged by the user (told to the view, and kept in localStorage without one) and the table's total width.
import { computed, reactive, watch } from 'vue';
import type { FieldDef } from '../fieldTypes';

const DEFAULT_W: Record<string, number> = {
  text: 200, long_text: 260, number: 120, date: 150, single_select: 150, multi_select: 220, checkbox: 96, user: 170, link: 220,
  email: 210, url: 210, phone: 150, rating: 130, created_time: 180, last_modified_time: 180, autonumber: 96,
  formula: 170, lookup: 220, rollup: 150, count: 110,
};
/** The width of the leading column (tick, row number, expand). */
export const LEAD_W = 96;
/** The width of the trailing "add a field" column. */
export const ADD_W = 64;
const WIDTH_KEY = 'table-service.colw';

export function useColumnWidths(props: { fields: FieldDef[]; columnWidths?: Record<string, number> }, resized?: (widths: Record<string, number>) => void) {
  const widths = reactive<Record<string, number>>({ ...JSON.parse(localStorage.getItem(WIDTH_KEY) ?? '{}'), ...props.columnWidths });
  // Another view (or the same one saved): its widths win over what this browser remembers.
  watch(() => props.columnWidths, (w) => Object.assign(widths, w ?? {}));
  const colW = (f: FieldDef) => widths[f.id] ?? DEFAULT_W[f.type] ?? 180;
  const totalW = computed(() => LEAD_W + ADD_W + props.fields.reduce((s, f) => s + colW(f), 0));
  function startResize(e: MouseEvent, f: FieldDef) {
    e.preventDefault();
    e.stopPropagation();
    const startX = e.clientX;
    const startW = colW(f);
    const move = (ev: MouseEvent) => (widths[f.id] = Math.max(64, Math.min(800, startW + ev.clientX - startX)));
    const up = () => {
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
      localStorage.setItem(WIDTH_KEY, JSON.stringify(widths));
      resized?.(Object.fromEntries(props.fields.map((x) => [x.id, colW(x)])));
    };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  }
  return { colW, totalW, startResize };
}
