// Computed fields on the table page (contract section 12): learns what lookups and rollups read, follows the background
// computation of fields on big tables (the column's "computing…" marker) and reloads the page's records once it is done.
import { computed, onUnmounted, watch, type Ref } from 'vue';
import { learnLookupTargets, loadComputing } from '../../components/computedFields';
import type { FieldDef } from '../../components/fieldTypes';

/** How often the progress of a background computation is asked for. */
const POLL_MS = 2000;

export function useComputedFields(opts: { tableId: () => string; fields: Ref<FieldDef[]>; reload: () => unknown }) {
  const { fields } = opts;
  const computing = computed(() => fields.value.some((f) => !!f.computing));
  /**
   * Lookups, rollups or counts through a link to this same table: a write to one record can change another record's
   * computed value on the page, so the page is reloaded after a write.
   */
  const readsOwnRecords = computed(() => fields.value.some((f) => {
    if (f.type !== 'lookup' && f.type !== 'rollup' && f.type !== 'count') return false;
    const link = fields.value.find((x) => x.id === f.config?.link_field);
    return link?.config?.table_id === opts.tableId();
  }));

  // What each lookup and rollup reads (for the look of a lookup's elements and the type of its filter values).
  watch(fields, (list) => { learnLookupTargets(list); }, { immediate: true });

  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  function schedule() {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }
  async function poll() {
    const table = opts.tableId();
    let finished = false;
    try {
      const now = await loadComputing(table);
      if (table !== opts.tableId() || stopped) return;
      fields.value = fields.value.map((f) => {
        const c = now.get(f.id);
        if (!c) return f;
        const next = c.computing ?? null;
        if (f.computing && !next) finished = true;
        return JSON.stringify(next) === JSON.stringify(f.computing ?? null) ? f : { ...f, computing: next, config: c.config };
      });
    } catch {
      /* asked again on the next round */
    }
    if (finished) opts.reload();
    if (computing.value) schedule();
  }
  watch(computing, (on) => (on ? schedule() : clearTimeout(timer)), { immediate: true });
  onUnmounted(() => {
    stopped = true;
    clearTimeout(timer);
  });

  return { computing, readsOwnRecords };
}
