// The views of the table page: which one is open (the `view` query parameter), the grid's filter, sort and hidden fields kept in it, and the records of a board, gallery, calendar.
import { computed, ref, shallowRef, watch, type Ref } from 'vue';
import { useRoute, useRouter } from 'vue-router';
import { gql } from '../../api';
import type { FieldDef, RecordRow } from '../../components/fieldTypes';
import { filterStateOf, loadViews, sortStateOf, updateView, visibleFields, type ViewDef } from '../../components/views/viewState';
import { errorText } from '../../ui/format';
import { toast } from '../../ui/feedback';
import { REC } from './documents';
import type { useTableView } from './useTableView';

export function useViews(opts: { tableId: () => string; fields: Ref<FieldDef[]>; grid: ReturnType<typeof useTableView>; canEdit: Ref<boolean>; canManage: Ref<boolean> }) {
  const route = useRoute();
  const router = useRouter();
  const views = ref<ViewDef[]>([]);
  const current = computed(() => views.value.find((v) => v.id === route.query.view) ?? views.value[0] ?? null);
  const records = shallowRef<RecordRow[]>([]);
  const shown = computed(() => visibleFields(current.value, opts.fields.value));
  /** Every field in the open view's order, hidden ones included (the view bar's field list). */
  const ordered = computed(() => visibleFields(current.value && { ...current.value, hiddenFields: [] }, opts.fields.value));
  /** Whether the caller may change the open view: editors, and only admins once it is locked. */
  const canChange = computed(() => !!current.value && opts.canEdit.value && (!current.value.locked || opts.canManage.value));

  async function load() {
    views.value = await loadViews(opts.tableId());
  }
  /** Puts the open grid view's filter and sort into the grid's state (before its first page is read). */
  function applyGrid() {
    const v = current.value;
    if (!v || v.type !== 'grid') return;
    opts.grid.filter.value = filterStateOf(v);
    opts.grid.sort.value = sortStateOf(v);
  }
  async function loadRecords() {
    const v = current.value;
    if (!v || v.type === 'grid' || v.type === 'form') return;
    const d = await gql<{ records: { items: RecordRow[] } }>(
      `query ViewRecords($t: ID!, $v: ID, $s: Int) { records(tableId: $t, viewId: $v, pageSize: $s) { items { ${REC} } } }`,
      { t: opts.tableId(), v: v.id, s: 1000 },
    );
    records.value = d.records.items;
  }
  function replace(v: ViewDef) {
    views.value = views.value.map((x) => (x.id === v.id ? v : x));
  }
  async function change(input: Record<string, unknown>) {
    if (!current.value) return;
    try {
      replace(await updateView(current.value.id, input));
    } catch (e) {
      toast(errorText(e), 'error');
    }
  }
  function select(id: string) {
    router.replace({ query: { ...route.query, view: id } });
  }
  watch(() => current.value?.id, async (id, before) => {
    if (!id || !before) return;
    applyGrid();
    await loadRecords().catch((e) => toast(errorText(e), 'error'));
  });

  // The grid's filter and sort are saved into its view as they change (once the typing settles).
  let timer: ReturnType<typeof setTimeout> | undefined;
  watch(() => [opts.grid.filterJson.value, opts.grid.sortJson.value], ([f, s]) => {
    const v = current.value;
    if (!v || v.type !== 'grid' || !canChange.value) return;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const same = JSON.stringify(v.filter ?? null) === JSON.stringify(toIds(f ?? null)) && JSON.stringify(v.sort ?? null) === JSON.stringify(toIds(s ?? null));
      if (!same) await change({ filter: f ?? null, sort: s ?? null });
    }, 600);
  });
  /** The builder's JSON (fields by name) with ids, to compare with what the view holds. */
  function toIds(x: unknown): unknown {
    const byName = new Map(opts.fields.value.map((f) => [f.name, f.id]));
    return JSON.parse(JSON.stringify(x), (k, val) => (k === 'field' && byName.has(val) ? byName.get(val) : val));
  }

  async function moveCard(recordId: string, value: string | null) {
    const v = current.value;
    const g = opts.fields.value.find((f) => f.id === v?.config.group_field);
    if (!g) return;
    records.value = records.value.map((r) => (r.id === recordId ? { ...r, fields: { ...r.fields, [g.name]: value } } : r));
    try {
      await gql(`mutation MoveCard($t: ID!, $id: ID!, $f: JSON!) { updateRecord(tableId: $t, id: $id, fields: $f) { id } }`, { t: opts.tableId(), id: recordId, f: { [g.id]: value } });
    } catch (e) {
      toast(errorText(e), 'error');
    }
    await loadRecords();
  }

  return { views, current, records, shown, ordered, canChange, load, applyGrid, loadRecords, select, change, replace, moveCard };
}
