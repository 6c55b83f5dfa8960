// The grid's active cell: which cell it is, following its record and field when rows or fields change and kept inside the page, moved by arrows and Tab, scrolled into view.
import { nextTick, ref, watch, type Ref } from 'vue';
import type { FieldDef, RecordRow } from '../fieldTypes';

export interface GridData {
  rows: RecordRow[];
  fields: FieldDef[];
}

export function useActiveCell(props: GridData, scroller: Ref<HTMLElement | null>) {
  const active = ref<{ r: number; c: number } | null>(null);

  watch(() => props.rows, (rows, old) => {
    // A live change (a record deleted above, a refetch) moves rows: the active cell stays on its record.
    const id = active.value && old?.[active.value.r]?.id;
    const at = id ? rows.findIndex((r) => r.id === id) : -1;
    if (active.value && at >= 0 && at !== active.value.r) active.value = { ...active.value, r: at };
    if (active.value && (active.value.r >= rows.length || active.value.c >= props.fields.length)) active.value = rows.length && props.fields.length ? { r: Math.min(active.value.r, rows.length - 1), c: Math.min(active.value.c, props.fields.length - 1) } : null;
  });
  watch(() => props.fields, (fields, old) => {
    const id = active.value && old?.[active.value.c]?.id;
    const at = id ? fields.findIndex((f) => f.id === id) : -1;
    if (active.value && at >= 0 && at !== active.value.c) active.value = { ...active.value, c: at };
    if (active.value && active.value.c >= props.fields.length) active.value = props.fields.length ? { ...active.value, c: props.fields.length - 1 } : null;
  });

  function cellEl(r: number, c: number) {
    const row = props.rows[r];
    const f = props.fields[c];
    if (!row || !f) return null;
    return scroller.value?.querySelector<HTMLElement>(`tr[data-record-id="${row.id}"] td[data-field-id="${f.id}"]`) ?? null;
  }
  function focusGrid() {
    scroller.value?.focus({ preventScroll: true });
  }
  async function activate(r: number, c: number, scroll = true) {
    active.value = { r, c };
    if (scroll) {
      await nextTick();
      cellEl(r, c)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
  }
  function move(dr: number, dc: number) {
    if (!props.rows.length || !props.fields.length) return;
    const a = active.value ?? { r: 0, c: 0 };
    let r = a.r + dr;
    let c = a.c + dc;
    if (dc !== 0 && dr === 0) {
      // Tab past the last column wraps to the next row.
      if (c >= props.fields.length && r < props.rows.length - 1) { c = 0; r += 1; }
      if (c < 0 && r > 0) { c = props.fields.length - 1; r -= 1; }
    }
    activate(Math.max(0, Math.min(props.rows.length - 1, r)), Math.max(0, Math.min(props.fields.length - 1, c)));
  }

  return { active, cellEl, focusGrid, activate, move };
}

export type ActiveCell = ReturnType<typeof useActiveCell>;
