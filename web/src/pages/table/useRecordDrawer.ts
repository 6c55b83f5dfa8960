// The record drawer of the table page: which record is open (or the form of a new one) and stepping to the previous or next row of the page.
import { computed, ref, type Ref } from 'vue';
import type { RecordRow } from '../../components/fieldTypes';

export function useRecordDrawer(rows: Ref<RecordRow[]>, pageIds: Ref<string[]>, focusGrid: () => void) {
  const openId = ref<string | null>(null);
  const creating = ref(false);
  const openIndex = computed(() => (openId.value ? pageIds.value.indexOf(openId.value) : -1));

  function openRecord(id: string) {
    creating.value = false;
    openId.value = id;
  }
  /** The drawer as the form of a new record. */
  function openNewRecordForm() {
    creating.value = true;
    openId.value = null;
  }
  /** Closes the drawer without moving the focus (another table, a deleted record). */
  function reset() {
    openId.value = null;
    creating.value = false;
  }
  function closeDrawer() {
    reset();
    focusGrid();
  }
  function stepDrawer(d: number) {
    const r = rows.value[openIndex.value + d];
    if (r) openId.value = r.id;
  }

  return { openId, creating, openIndex, openRecord, openNewRecordForm, reset, closeDrawer, stepDrawer };
}

export type RecordDrawerState = ReturnType<typeof useRecordDrawer>;
