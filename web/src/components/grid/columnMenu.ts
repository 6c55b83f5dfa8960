// The column menu of the grid headers (a role="menu" opened by each header's ▾ button or a click on the header) and renaming a field in its header.
// Focus moves to the menu's first item, arrows move, Escape or choosing an item closes it and puts focus back on the button.
import { nextTick, ref, watch, type Ref } from 'vue';
import type { FieldDef } from '../fieldTypes';
import { focusMenuItem, onMenuKeydown } from '../../ui/menu';

export type ColumnMenuAction = 'edit' | 'rename' | 'delete' | 'asc' | 'desc' | 'filter';

export interface ColumnMenuHandlers {
  edit: (f: FieldDef) => void;
  delete: (f: FieldDef) => void;
  filter: (f: FieldDef) => void;
  sort: (f: FieldDef, direction: 'asc' | 'desc') => void;
  rename: (f: FieldDef, name: string) => void;
}

/** `menuPanel` is the open menu's element (the template's ref), `scroller` the grid's, where the rename input is. */
export function useColumnMenu(props: { fields: FieldDef[] }, scroller: Ref<HTMLElement | null>, menuPanel: Ref<HTMLElement | null>, on: ColumnMenuHandlers) {
  const menu = ref<{ field: FieldDef; top: number; left: number } | null>(null);
  let menuButton: HTMLElement | null = null;
  const renaming = ref<{ fieldId: string; name: string } | null>(null);

  async function openMenu(f: FieldDef, e: MouseEvent | KeyboardEvent, focus: 'first' | 'last' = 'first') {
    const th = (e.currentTarget as HTMLElement).closest('th')!;
    const rect = th.getBoundingClientRect();
    if (menu.value?.field.id === f.id) return closeMenu(false);
    menuButton = th.querySelector<HTMLElement>('[data-testid="field-menu"]');
    menu.value = { field: f, top: rect.bottom + 4, left: Math.min(rect.left, window.innerWidth - 240) };
    await nextTick();
    focusMenuItem(menuPanel.value, focus);
  }
  function closeMenu(refocus: boolean) {
    menu.value = null;
    if (refocus) menuButton?.focus();
  }
  function onMenuButtonKey(f: FieldDef, e: KeyboardEvent) {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    e.stopPropagation();
    if (menu.value?.field.id === f.id) focusMenuItem(menuPanel.value, e.key === 'ArrowUp' ? 'last' : 'first');
    else openMenu(f, e, e.key === 'ArrowUp' ? 'last' : 'first');
  }
  function onMenuKey(e: KeyboardEvent) {
    onMenuKeydown(e, menuPanel.value, closeMenu);
  }
  function menuAction(action: ColumnMenuAction) {
    const f = menu.value?.field;
    closeMenu(action !== 'rename');
    if (!f) return;
    if (action === 'edit') on.edit(f);
    else if (action === 'delete') on.delete(f);
    else if (action === 'filter') on.filter(f);
    else if (action === 'asc' || action === 'desc') on.sort(f, action);
    else if (action === 'rename') {
      renaming.value = { fieldId: f.id, name: f.name };
      nextTick(() => {
        const el = scroller.value?.querySelector<HTMLInputElement>('[data-testid="field-rename-input"]');
        el?.focus();
        el?.select();
      });
    }
  }
  function finishRename(save: boolean) {
    const r = renaming.value;
    renaming.value = null;
    if (!r || !save) return;
    const f = props.fields.find((x) => x.id === r.fieldId);
    if (f && r.name.trim() && r.name.trim() !== f.name) on.rename(f, r.name.trim());
  }

  // A mousedown outside the menu and its buttons closes it.
  function onDocDown(e: MouseEvent) {
    if (menu.value && !(e.target as HTMLElement).closest('.field-menu-panel, [data-testid="field-menu"]')) closeMenu(false);
  }
  watch(menu, (m) => {
    if (m) document.addEventListener('mousedown', onDocDown, true);
    else document.removeEventListener('mousedown', onDocDown, true);
  });

  return { menu, renaming, openMenu, onMenuButtonKey, onMenuKey, menuAction, finishRename };
}
