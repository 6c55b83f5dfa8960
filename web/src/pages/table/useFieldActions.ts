// Field changes from the table page: the field dialog, renaming and deleting a field, and sorting or filtering by a field from its column menu.
import { ref, type Ref } from 'vue';
import { gql } from '../../api';
import { newCondition } from '../../components/filters';
import type { FieldDef } from '../../components/fieldTypes';
import { forgetTableFields, prefetchLabels } from '../../components/linkLabels';
import { errorText } from '../../ui/format';
import { confirmDialog, toast } from '../../ui/feedback';
import { FIELD } from './documents';
import type { TableView } from './useTableView';

export function useFieldActions(opts: { tableId: () => string; fields: Ref<FieldDef[]>; view: TableView; showFilter: () => void }) {
  const { fields, view } = opts;
  /** The open field dialog: a new field (null) or the field being edited. */
  const fieldDialog = ref<{ field: FieldDef | null } | null>(null);
  function openFieldDialog(field: FieldDef | null) {
    fieldDialog.value = { field };
  }
  function closeFieldDialog() {
    fieldDialog.value = null;
  }

  async function onFieldSaved(f: FieldDef) {
    const i = fields.value.findIndex((x) => x.id === f.id);
    fields.value = i >= 0 ? fields.value.map((x) => (x.id === f.id ? f : x)) : [...fields.value, f];
    fieldDialog.value = null;
    forgetTableFields(opts.tableId());
    view.prune();
    toast(i >= 0 ? `Field “${f.name}” saved` : `Field “${f.name}” added`, 'success');
    if (f.type === 'link') prefetchLabels(String(f.config.table_id));
    await view.loadRecords();
  }
  async function renameField(f: FieldDef, name: string) {
    try {
      const saved = (await gql<{ updateField: FieldDef }>(`mutation($t: ID!, $id: ID!, $i: FieldInput!) { updateField(tableId: $t, id: $id, input: $i) { ${FIELD} } }`, { t: opts.tableId(), id: f.id, i: { name } })).updateField;
      fields.value = fields.value.map((x) => (x.id === f.id ? saved : x));
      forgetTableFields(opts.tableId());
      await view.loadRecords();
    } catch (e) {
      toast(errorText(e), 'error');
    }
  }
  async function deleteField(f: FieldDef) {
    const ok = await confirmDialog({ title: `Delete the field “${f.name}”?`, message: 'Its values in every record are deleted too. This cannot be undone.', confirmLabel: 'Delete field', danger: true });
    if (!ok) return;
    try {
      await gql('mutation($t: ID!, $id: ID!) { deleteField(tableId: $t, id: $id) { id deleted } }', { t: opts.tableId(), id: f.id });
      fields.value = fields.value.filter((x) => x.id !== f.id);
      forgetTableFields(opts.tableId());
      view.prune();
      toast(`Field “${f.name}” deleted`, 'success');
      await view.loadRecords();
    } catch (e) {
      toast(errorText(e), 'error');
    }
  }

  function sortByField(f: FieldDef, direction: 'asc' | 'desc') {
    view.sort.value.splice(0, view.sort.value.length, { fieldId: f.id, direction });
  }
  function filterByField(f: FieldDef) {
    view.filter.value.items.push(newCondition(f));
    opts.showFilter();
  }

  return { fieldDialog, openFieldDialog, closeFieldDialog, onFieldSaved, renameField, deleteField, sortByField, filterByField };
}
