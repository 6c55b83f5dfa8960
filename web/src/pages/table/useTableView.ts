// The records the table page shows: filter and sort (remembered per table), page and page size, loading with stale answers dropped, and the ticked records of the view.
import { computed, onUnmounted, ref, shallowRef, watch, type Ref } from 'vue';
import { gql } from '../../api';
import { useSelection } from '../../components/grid/selection';
import type { FieldDef, RecordRow } from '../../components/fieldTypes';
import { activeConditionCount, emptyFilter, filterFieldIds, pruneView, toFilterJson, toSortJson, viewMemory, type FilterState, type SortKey } from '../../components/filters';
import { errorText } from '../../ui/format';
import { toast } from '../../ui/feedback';
import { RECORDS_CHANGED_EVENT } from '../../plugins/types';
import { REC } from './documents';

export const PAGE_SIZES = [25, 50, 100];
const SIZE_KEY = 'table-service.pageSize';

export function useTableView(opts: { tableId: () => string; fields: Ref<FieldDef[]>; ready: Ref<boolean> }) {
  const rows = shallowRef<RecordRow[]>([]);
  const total = ref(0);
  const page = ref(1);
  const pageSize = ref(PAGE_SIZES.includes(Number(localStorage.getItem(SIZE_KEY))) ? Number(localStorage.getItem(SIZE_KEY)) : 50);
  const loading = ref(false);
  const viewError = ref('');

  const filter = ref<FilterState>(emptyFilter());
  const sort = ref<SortKey[]>([]);
  const filterJson = computed(() => toFilterJson(filter.value, opts.fields.value));
  const sortJson = computed(() => toSortJson(sort.value, opts.fields.value));
  const filterCount = computed(() => activeConditionCount(filter.value, opts.fields.value));
  const filteredIds = computed(() => (filterCount.value ? filterFieldIds(filter.value) : new Set<string>()));
  const viewKey = computed(() => JSON.stringify([opts.tableId(), filterJson.value, sortJson.value]));
  let loadedViewKey = '';

  const pageIds = computed(() => rows.value.map((r) => r.id));
  const pageCount = computed(() => Math.max(1, Math.ceil(total.value / pageSize.value)));
  /** The page and size the shown rows came from (the requested page may still be loading). */
  const shown = ref({ page: 1, size: pageSize.value });
  const rangeStart = computed(() => (total.value && rows.value.length ? (shown.value.page - 1) * shown.value.size + 1 : 0));
  const rangeEnd = computed(() => (rows.value.length ? Math.min(total.value, (shown.value.page - 1) * shown.value.size + rows.value.length) : 0));

  const selection = useSelection({ pageIds, viewTotal: total, fetchViewIds });

  async function fetchViewIds(limit: number): Promise<string[]> {
    const out: string[] = [];
    const size = 500;
    for (let p = 1; out.length < limit; p++) {
      const d = await gql<{ records: { items: Array<{ id: string }> } }>(
        'query($t: ID!, $p: Int, $s: Int, $f: JSON, $o: JSON) { records(tableId: $t, page: $p, pageSize: $s, filter: $f, sort: $o) { items { id } } }',
        { t: opts.tableId(), p, s: size, f: filterJson.value, o: sortJson.value },
      );
      out.push(...d.records.items.map((r) => r.id));
      if (d.records.items.length < size) break;
    }
    return out.slice(0, limit);
  }

  let loadSeq = 0;
  /** Loads the current page; `quiet` (a live refresh) leaves the grid undimmed, and the newest call's answer wins. */
  async function loadRecords(opt: { quiet?: boolean } = {}): Promise<void> {
    const my = ++loadSeq;
    const key = viewKey.value;
    if (!opt.quiet) loading.value = true;
    try {
      const d = await gql<{ records: { items: RecordRow[]; total: number } }>(
        `query($t: ID!, $p: Int, $s: Int, $f: JSON, $o: JSON) { records(tableId: $t, page: $p, pageSize: $s, filter: $f, sort: $o) { total items { ${REC} } } }`,
        { t: opts.tableId(), p: page.value, s: pageSize.value, f: filterJson.value, o: sortJson.value },
      );
      if (my !== loadSeq) return;
      loadedViewKey = key;
      viewError.value = '';
      total.value = d.records.total;
      // Deleted records can leave us past the last page.
      if (!d.records.items.length && page.value > 1 && d.records.total > 0) {
        page.value = Math.ceil(d.records.total / pageSize.value);
        return loadRecords(opt);
      }
      rows.value = d.records.items;
      shown.value = { page: page.value, size: pageSize.value };
      selection.retainPage();
    } catch (e) {
      if (my !== loadSeq) return;
      const msg = errorText(e);
      if (/^(filter|sort)\b/i.test(msg)) {
        loadedViewKey = key;
        viewError.value = msg;
      } else if (!opt.quiet) toast(msg, 'error');
    } finally {
      if (my === loadSeq) loading.value = false;
    }
  }

  // A changed filter or sort reloads the first page, once the typing settles.
  let viewTimer: ReturnType<typeof setTimeout> | undefined;
  watch(viewKey, () => {
    if (!opts.ready.value) return;
    clearTimeout(viewTimer);
    viewTimer = setTimeout(() => {
      if (viewKey.value === loadedViewKey) return;
      page.value = 1;
      selection.clear();
      loadRecords();
    }, 300);
  });
  onUnmounted(() => clearTimeout(viewTimer));

  // A plugin that wrote records of this table (through the plugin host) makes the page reload them.
  function onRecordsChanged(e: Event) {
    if ((e as CustomEvent<{ tableId?: string }>).detail?.tableId === opts.tableId()) loadRecords();
  }
  window.addEventListener(RECORDS_CHANGED_EVENT, onRecordsChanged);
  onUnmounted(() => window.removeEventListener(RECORDS_CHANGED_EVENT, onRecordsChanged));

  function goPage(p: number) {
    const next = Math.max(1, Math.min(pageCount.value, Math.floor(p) || 1));
    if (next === page.value) return;
    page.value = next;
    selection.clear();
    loadRecords();
  }
  function setPageSize(n: number) {
    pageSize.value = n;
    localStorage.setItem(SIZE_KEY, String(n));
    page.value = 1;
    selection.clear();
    loadRecords();
  }

  /** Another table: no rows, the first page, nothing ticked, and the filter and sort it had while the app is open. */
  function reset() {
    clearTimeout(viewTimer);
    viewError.value = '';
    rows.value = [];
    total.value = 0;
    page.value = 1;
    selection.clear();
    selection.forgetLastTicked();
    let mem = viewMemory.get(opts.tableId());
    if (!mem) viewMemory.set(opts.tableId(), (mem = { filter: emptyFilter(), sort: [] }));
    filter.value = mem.filter;
    sort.value = mem.sort;
  }
  /** Drops filter conditions and sort keys of fields that are gone. */
  function prune() {
    pruneView(filter.value, sort.value, opts.fields.value);
  }

  return {
    rows, total, page, pageSize, loading, viewError, shown, rangeStart, rangeEnd, pageIds,
    filter, sort, filterJson, sortJson, filterCount, filteredIds, selection,
    loadRecords, goPage, setPageSize, reset, prune,
  };
}

export type TableView = ReturnType<typeof useTableView>;
