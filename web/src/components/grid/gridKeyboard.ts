// Keyboard of the grid: arrows, Tab and Ctrl/⌘+arrows move the active cell; Enter, Space and typing edit it; Delete clears it; Shift+Enter opens the record.
import type { Ref } from 'vue';
import type { ActiveCell, GridData } from './activeCell';
import type { CellEditing } from './cellEditing';

/** Field types whose editor opens by typing a character into the active cell. */
const TYPE_TO_EDIT = new Set(['text', 'long_text', 'number', 'email', 'url', 'phone']);
const ARROWS: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

export function useGridKeyboard(props: GridData, scroller: Ref<HTMLElement | null>, cell: ActiveCell, edit: CellEditing, openRecord: (id: string) => void) {
  const { active, activate, move, focusGrid } = cell;
  const { editing } = edit;

  /** Keys while an editor is open: Escape cancels, Enter commits (Shift+Enter is a new line in long text), Tab commits and moves. */
  function onEditorKey(e: KeyboardEvent, ed: NonNullable<typeof editing.value>) {
    const f = edit.fieldById(ed.fieldId);
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      edit.cancelEdit();
    } else if (e.key === 'Enter' && !(e.shiftKey && f?.type === 'long_text') && !e.isComposing) {
      e.preventDefault();
      edit.commitEdit(undefined, ed.token);
      focusGrid();
    } else if (e.key === 'Tab') {
      e.preventDefault();
      edit.commitEdit(undefined, ed.token);
      move(0, e.shiftKey ? -1 : 1);
      focusGrid();
    }
  }

  function onKey(e: KeyboardEvent) {
    if (editing.value) return onEditorKey(e, editing.value);
    if (e.target !== scroller.value) return;
    const a = active.value;
    if (ARROWS[e.key]) {
      e.preventDefault();
      if (!a) return activate(0, 0);
      const [dr, dc] = ARROWS[e.key];
      if (e.metaKey || e.ctrlKey) return activate(dr ? (dr < 0 ? 0 : props.rows.length - 1) : a.r, dc ? (dc < 0 ? 0 : props.fields.length - 1) : a.c);
      return move(dr, dc);
    }
    if (e.key === 'Tab') {
      if (!a) return;
      e.preventDefault();
      return move(0, e.shiftKey ? -1 : 1);
    }
    if (!a) return;
    if (e.key === 'Enter') {
      e.preventDefault();
      if (e.shiftKey && props.rows[a.r]) return openRecord(props.rows[a.r].id);
      return edit.startEdit();
    }
    if (e.key === 'Escape') {
      edit.errors.clear();
      return;
    }
    const f = props.fields[a.c];
    if (e.key === ' ' && f?.type === 'checkbox') {
      e.preventDefault();
      return edit.startEdit();
    }
    if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault();
      return edit.clearCell();
    }
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey && f && TYPE_TO_EDIT.has(f.type)) {
      e.preventDefault();
      edit.startEdit(e.key);
    }
  }

  return { onKey };
}
