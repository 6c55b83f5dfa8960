// Inline editing of the grid's cells: the open editor and where it floats, commits through the page's save, per-cell saving state and errors under the cell.
import { nextTick, reactive, ref, watch, type Ref } from 'vue';
import type FieldEditor from '../FieldEditor.vue';
import { isReadOnly, sameValue, type FieldDef, type RecordRow } from '../fieldTypes';
import { errorText } from '../../ui/format';
import type { ActiveCell, GridData } from './activeCell';

export interface EditableGridData extends GridData {
  canEdit: boolean;
  save: (row: RecordRow, field: FieldDef, value: unknown) => Promise<void>;
}

/** The key of a cell in the saving and error maps. */
export const cellKey = (rowId: string, fieldId: string) => `${rowId}:${fieldId}`;

/** An empty text or list is stored as null. */
function normalize(v: unknown) {
  if (typeof v === 'string' && v === '' ) return null;
  if (Array.isArray(v) && !v.length) return null;
  return v ?? null;
}

export function useCellEditing(props: EditableGridData, scroller: Ref<HTMLElement | null>, cell: ActiveCell) {
  const { active, cellEl, focusGrid, activate } = cell;
  const editing = ref<{ rowId: string; fieldId: string; value: unknown; token: number } | null>(null);
  const anchor = ref<{ top: number; left: number; width: number; height: number } | null>(null);
  const errors = reactive(new Map<string, string>());
  const saving = reactive(new Set<string>());
  let editToken = 0;
  let editorRef: InstanceType<typeof FieldEditor> | null = null;
  const setEditorRef = (el: unknown) => (editorRef = el as InstanceType<typeof FieldEditor> | null);

  watch(() => props.rows, (rows) => {
    if (editing.value && !rows.some((r) => r.id === editing.value!.rowId)) editing.value = null;
    // Rows moved by a live change: the open editor follows its cell (its draft stays, the row is keyed by id).
    else if (editing.value) void nextTick(onScroll);
    // Errors belong to the values they were about; a new page drops them.
    for (const k of [...errors.keys()]) if (!rows.some((r) => k.startsWith(`${r.id}:`))) errors.delete(k);
  });
  watch(() => props.fields, () => {
    if (editing.value && !props.fields.some((f) => f.id === editing.value!.fieldId)) editing.value = null;
  });

  const fieldById = (id: string) => props.fields.find((f) => f.id === id);
  const isEditing = (row: RecordRow, f: FieldDef) => editing.value?.rowId === row.id && editing.value?.fieldId === f.id;
  const editable = (f: FieldDef) => props.canEdit && !isReadOnly(f);

  function startEdit(initial?: string) {
    const a = active.value;
    if (!a) return;
    const row = props.rows[a.r];
    const f = props.fields[a.c];
    if (!row || !f || !editable(f)) return;
    errors.delete(cellKey(row.id, f.id));
    if (f.type === 'attachment') return; // its cell holds its own controls: pick, drop, preview
    if (f.type === 'checkbox') {
      write(row, f, !row.fields[f.name]);
      return;
    }
    const el = cellEl(a.r, a.c);
    const rect = el?.getBoundingClientRect();
    anchor.value = rect ? { top: rect.top, left: rect.left, width: rect.width, height: rect.height } : null;
    editing.value = { rowId: row.id, fieldId: f.id, value: initial !== undefined ? initial : row.fields[f.name], token: ++editToken };
  }
  function cancelEdit() {
    editing.value = null;
    focusGrid();
  }
  async function write(row: RecordRow, f: FieldDef, value: unknown) {
    const k = cellKey(row.id, f.id);
    errors.delete(k);
    saving.add(k);
    try {
      await props.save(row, f, value);
    } catch (e) {
      errors.set(k, errorText(e));
    } finally {
      saving.delete(k);
    }
  }
  function commitEdit(value?: unknown, token?: number) {
    const ed = editing.value;
    if (!ed || (token !== undefined && token !== ed.token)) return;
    const v = normalize(value !== undefined ? value : editorRef?.value());
    editing.value = null;
    const row = props.rows.find((r) => r.id === ed.rowId);
    const f = fieldById(ed.fieldId);
    if (!row || !f) return;
    if (sameValue(v, normalize(row.fields[f.name]))) return;
    write(row, f, v);
  }
  function onEditorCommit(v: unknown, token: number) {
    const refocus = scroller.value?.contains(document.activeElement) ?? false;
    commitEdit(v, token);
    if (refocus || document.activeElement === document.body) focusGrid();
  }
  function clearCell() {
    const a = active.value;
    if (!a) return;
    const row = props.rows[a.r];
    const f = props.fields[a.c];
    if (!row || !f || !editable(f)) return;
    if (f.type === 'checkbox') { if (row.fields[f.name]) write(row, f, false); return; }
    if (row.fields[f.name] === null || row.fields[f.name] === undefined) return;
    write(row, f, null);
  }

  function onCellMouseDown(r: number, c: number, e: MouseEvent) {
    if (editing.value && isEditing(props.rows[r], props.fields[c])) return;
    const wasActive = active.value?.r === r && active.value?.c === c;
    if (editing.value) commitEdit(undefined, editing.value.token);
    activate(r, c, false);
    // Keep the focus on the grid so the keyboard keeps working.
    if (!(e.target as HTMLElement).closest('input, button, textarea, select')) {
      e.preventDefault();
      focusGrid();
    }
    const f = props.fields[c];
    if (f?.type === 'checkbox' && (e.target as HTMLElement).closest('.cb')) startEdit();
    else if (wasActive) startEdit();
  }
  function onCellDblClick() {
    if (!editing.value) startEdit();
  }
  /** The editor floats over its cell; it follows the cell when the grid scrolls. */
  function onScroll() {
    if (!editing.value || !active.value) return;
    const rect = cellEl(active.value.r, active.value.c)?.getBoundingClientRect();
    if (rect) anchor.value = { top: rect.top, left: rect.left, width: rect.width, height: rect.height };
  }
  function dismissError(k: string) {
    errors.delete(k);
  }

  return {
    editing, anchor, errors, saving, setEditorRef, fieldById, isEditing,
    startEdit, cancelEdit, commitEdit, onEditorCommit, clearCell, onCellMouseDown, onCellDblClick, onScroll, dismissError,
  };
}

export type CellEditing = ReturnType<typeof useCellEditing>;
