// Record writes of the table page: saving a cell, adding a record (or its form when a field is required), deleting the ticked records, and the drawer's creates and deletes.
import { computed, ref, type Ref } from 'vue';
import { gql } from '../../api';
import { isReadOnly, type FieldDef, type RecordRow } from '../../components/fieldTypes';
import { errorText, formatCount } from '../../ui/format';
import { confirmDialog, toast } from '../../ui/feedback';
import { REC } from './documents';
import type { TableView } from './useTableView';
import type { RecordDrawerState } from './useRecordDrawer';
import type { LiveWrites } from './liveWrites';

/** What the page asks of its grid. */
export interface GridHandle {
  focus(): void;
  activate(r: number, c: number): unknown;
}

export function useRecordActions(opts: {
  tableId: () => string;
  fields: Ref<FieldDef[]>;
  canEdit: Ref<boolean>;
  view: TableView;
  drawer: RecordDrawerState;
  grid: () => GridHandle | null;
  /** Computed fields of the table read other records of it (through a link to itself): a write reloads the page. */
  readsOwnRecords?: Ref<boolean>;
  /** The live grid: which events may touch a cell being written, and records it already counted. */
  live?: { writes: LiveWrites; alreadyCounted(id: string): boolean };
}) {
  const { rows, total, selection } = opts.view;
  /** Records just added, flashed in the grid. */
  const fresh = ref(new Set<string>());

  async function save(row: RecordRow, f: FieldDef, value: unknown) {
    const old = row.fields[f.name];
    const w = opts.live?.writes.begin(row.id, f.name);
    replaceRow({ ...row, fields: { ...row.fields, [f.name]: value } });
    try {
      const r = (await gql<{ updateRecord: RecordRow }>(`mutation($t: ID!, $id: ID!, $f: JSON!) { updateRecord(tableId: $t, id: $id, fields: $f) { ${REC} } }`, {
        t: opts.tableId(), id: row.id, f: { [f.name]: value },
      })).updateRecord;
      // When this write's event came first the row holds it already, with whatever others changed since.
      if (!w || opts.live!.writes.answered(w, r)) replaceRow(r);
      // The answer carries this record's recomputed values; other records' come with a reload.
      if (opts.readsOwnRecords?.value) void opts.view.loadRecords();
    } catch (e) {
      if (w) opts.live!.writes.failed(w);
      const cur = rows.value.find((x) => x.id === row.id);
      if (cur) replaceRow({ ...cur, fields: { ...cur.fields, [f.name]: old } });
      throw e;
    }
  }
  function replaceRow(r: RecordRow) {
    const i = rows.value.findIndex((x) => x.id === r.id);
    if (i < 0) return;
    const next = rows.value.slice();
    next[i] = r;
    rows.value = next;
  }

  const needsForm = computed(() => opts.fields.value.some((f) => f.required && !isReadOnly(f)));
  async function addRecord() {
    if (!opts.canEdit.value) return;
    if (needsForm.value) {
      opts.drawer.openNewRecordForm();
      return;
    }
    try {
      const r = (await gql<{ createRecord: RecordRow }>(`mutation($t: ID!) { createRecord(tableId: $t, fields: {}) { ${REC} } }`, { t: opts.tableId() })).createRecord;
      appendRow(r);
    } catch (e) {
      toast(errorText(e), 'error');
    }
  }
  function appendRow(r: RecordRow) {
    // The new record shows at the bottom of this page until the next reload puts it in its place. Its live event
    // may have come first: then it is shown or counted already.
    const i = rows.value.findIndex((x) => x.id === r.id);
    if (i >= 0) replaceRow(r);
    else {
      rows.value = [...rows.value, r];
      if (!opts.live?.alreadyCounted(r.id)) total.value += 1;
    }
    fresh.value = new Set([r.id]);
    opts.grid()?.activate(rows.value.findIndex((x) => x.id === r.id), 0);
    opts.grid()?.focus();
  }

  async function deleteSelected() {
    const n = selection.count.value;
    if (!n) return;
    const inView = selection.scope.value === 'view';
    const ok = await confirmDialog({
      title: `Delete ${formatCount(n)} record${n === 1 ? '' : 's'}?`,
      message: inView ? `Every record in this view (${formatCount(n)}) will be deleted. This cannot be undone.` : 'The ticked records will be deleted. This cannot be undone.',
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!ok) return;
    const deleted: string[] = [];
    try {
      if (inView) {
        const f = opts.view.filterJson.value;
        const o = opts.view.sortJson.value;
        for (let round = 0; round < 1000; round++) {
          const d = await gql<{ records: { items: Array<{ id: string }> } }>(
            'query($t: ID!, $f: JSON, $o: JSON) { records(tableId: $t, page: 1, pageSize: 1000, filter: $f, sort: $o) { items { id } } }', { t: opts.tableId(), f, o });
          const ids = d.records.items.map((r) => r.id);
          if (!ids.length) break;
          await batchDelete(ids);
          deleted.push(...ids);
          if (ids.length < 1000) break;
        }
      } else {
        const ids = selection.snapshot().recordIds;
        for (let i = 0; i < ids.length; i += 1000) {
          await batchDelete(ids.slice(i, i + 1000));
          deleted.push(...ids.slice(i, i + 1000));
        }
      }
      toast(`Deleted ${formatCount(deleted.length)} record${deleted.length === 1 ? '' : 's'}`, 'success');
    } catch (e) {
      toast(errorText(e), 'error');
    }
    selection.forget(deleted);
    if (inView) selection.clear();
    await opts.view.loadRecords();
  }
  async function batchDelete(ids: string[]) {
    await gql('mutation($t: ID!, $r: JSON!) { batchRecords(tableId: $t, action: delete, records: $r) { deleted } }', { t: opts.tableId(), r: ids.map((id) => ({ id })) });
  }

  function onDrawerDeleted(id: string) {
    opts.drawer.openId.value = null;
    selection.forget([id]);
    opts.view.loadRecords();
  }
  function onDrawerCreated(r: RecordRow) {
    opts.drawer.creating.value = false;
    appendRow(r);
    opts.drawer.openId.value = r.id;
  }

  return { fresh, save, replaceRow, addRecord, deleteSelected, onDrawerDeleted, onDrawerCreated };
}
