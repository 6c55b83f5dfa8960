// Ticked records of the grid and the selection snapshot handed to plugins (spec 3, 2.5): page scope, or the whole filtered view.
import { computed, reactive, ref, type Ref } from 'vue';
import type { SelectionSnapshot } from '../../plugins/types';

export const SNAPSHOT_CAP = 1000;

export function useSelection(opts: {
  /** Ids of the rows on the current page. */
  pageIds: Ref<string[]>;
  /** Records in the filtered view (the records query's total). */
  viewTotal: Ref<number>;
  /** Fetches up to `limit` ids of the filtered view, page by page. */
  fetchViewIds: (limit: number) => Promise<string[]>;
}) {
  const ids = reactive(new Set<string>());
  /** The header select-all was used (and nothing was unticked since). */
  const selectAll = ref(false);
  const scope = ref<'page' | 'view'>('page');
  const viewIds = ref<string[]>([]);
  const viewLoading = ref(false);
  let viewSeq = 0;

  const isSelected = (id: string) => scope.value === 'view' || ids.has(id);
  const count = computed(() => (scope.value === 'view' ? opts.viewTotal.value : ids.size));
  const headerState = computed<'none' | 'some' | 'all'>(() => {
    const page = opts.pageIds.value;
    if (!page.length) return 'none';
    if (scope.value === 'view') return 'all';
    const n = page.filter((id) => ids.has(id)).length;
    return n === 0 ? 'none' : n === page.length ? 'all' : 'some';
  });

  function clear() {
    ids.clear();
    selectAll.value = false;
    scope.value = 'page';
    viewIds.value = [];
    viewSeq++;
    viewLoading.value = false;
  }
  function toggle(id: string, on = !isSelected(id)) {
    if (scope.value === 'view') {
      // Leaving the view selection: keep the page ticked except this record.
      scope.value = 'page';
      viewIds.value = [];
      viewSeq++;
      ids.clear();
      for (const p of opts.pageIds.value) ids.add(p);
    }
    if (on) ids.add(id);
    else ids.delete(id);
    selectAll.value = false;
  }
  /** Ticks a range of the page (shift-click). */
  function setMany(list: string[], on: boolean) {
    for (const id of list) toggle(id, on);
  }
  /** A row's tick box: shift-click ticks or unticks the range from the row ticked last. */
  let lastTicked = -1;
  function tickRow(id: string, shift: boolean) {
    const page = opts.pageIds.value;
    const i = page.indexOf(id);
    if (shift && lastTicked >= 0 && i >= 0) {
      const [a, b] = [Math.min(lastTicked, i), Math.max(lastTicked, i)];
      setMany(page.slice(a, b + 1), !isSelected(id));
    } else toggle(id);
    lastTicked = i;
  }
  /** Another table: no row was ticked last. */
  function forgetLastTicked() {
    lastTicked = -1;
  }
  /** The header checkbox: ticks the page, or unticks everything when the page is ticked. */
  function toggleAll() {
    if (headerState.value === 'all') return clear();
    scope.value = 'page';
    ids.clear();
    for (const id of opts.pageIds.value) ids.add(id);
    selectAll.value = true;
  }
  /** "Select all N records in this view". */
  async function selectView() {
    ids.clear();
    for (const id of opts.pageIds.value) ids.add(id);
    scope.value = 'view';
    selectAll.value = true;
    await refreshViewIds();
  }
  async function refreshViewIds() {
    if (scope.value !== 'view') return;
    const my = ++viewSeq;
    viewLoading.value = true;
    try {
      const list = await opts.fetchViewIds(SNAPSHOT_CAP);
      if (my === viewSeq) viewIds.value = list;
    } finally {
      if (my === viewSeq) viewLoading.value = false;
    }
  }
  /** After the page was reloaded: drop ticked ids that are no longer on it. */
  function retainPage() {
    const page = new Set(opts.pageIds.value);
    for (const id of [...ids]) if (!page.has(id)) ids.delete(id);
    if (scope.value === 'view') {
      if (opts.viewTotal.value === 0) clear();
      else refreshViewIds();
    } else if (selectAll.value && headerState.value !== 'all') selectAll.value = false;
    if (!ids.size && scope.value === 'page') selectAll.value = false;
  }
  /** Deleted records leave the selection. */
  function forget(deleted: string[]) {
    for (const id of deleted) ids.delete(id);
    if (scope.value === 'view') viewIds.value = viewIds.value.filter((id) => !deleted.includes(id));
  }

  /** The snapshot handed to a plugin when it opens: ids only, at most 1000. */
  function snapshot(): SelectionSnapshot {
    if (scope.value === 'view') {
      const total = opts.viewTotal.value;
      const known = viewIds.value.length ? viewIds.value : opts.pageIds.value;
      const recordIds = known.slice(0, SNAPSHOT_CAP);
      return { recordIds, total, truncated: total > recordIds.length && total > SNAPSHOT_CAP, selectAll: true, scope: 'view', at: Date.now() };
    }
    const all = opts.pageIds.value.filter((id) => ids.has(id));
    for (const id of ids) if (!all.includes(id)) all.push(id);
    const recordIds = all.slice(0, SNAPSHOT_CAP);
    return { recordIds, total: all.length, truncated: all.length > SNAPSHOT_CAP, selectAll: selectAll.value, scope: 'page', at: Date.now() };
  }

  return { ids, selectAll, scope, viewIds, viewLoading, count, headerState, isSelected, clear, toggle, setMany, tickRow, forgetLastTicked, toggleAll, selectView, refreshViewIds, retainPage, forget, snapshot };
}
