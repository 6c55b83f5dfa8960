// The live grid (contract section 14): the table page follows `tableEvents` and applies other users' changes in place, batched into one render per animation frame, refetching the page only when an event's place in it cannot be known.
import { onUnmounted, ref, type Ref } from 'vue';
import { openEventStream, TABLE_EVENTS, type LiveEvent, type LiveStatus } from '../../eventStream';
import type { FieldDef, RecordRow } from '../../components/fieldTypes';
import { filterFieldIds } from '../../components/filters';
import { useLiveWrites } from './liveWrites';
import type { TableView } from './useTableView';

/** How long the first page load waits for the subscription to open (so no event falls between the two). */
const OPEN_WAIT_MS = 1500;
/** A refetch waits for a burst of events to settle, but not longer than the max. */
const REFETCH_DEBOUNCE_MS = 250;
const REFETCH_MAX_WAIT_MS = 2000;
/** Events held while the tab draws no frames (hidden); past this the page is refetched instead. */
const MAX_QUEUE = 5000;

export function useLiveTable(opts: {
  tableId: () => string;
  view: TableView;
  fields: Ref<FieldDef[]>;
  /** Reads the table's fields again (a field.* event). */
  refreshFields: () => Promise<unknown>;
  /** table.updated, table.deleted and view events. */
  onTableEvent: (e: LiveEvent) => void;
  /** Records another user created that appeared on this page, and ones deleted (the drawer may show one). */
  onCreated?: (ids: string[]) => void;
  onDeleted?: (ids: string[]) => void;
}) {
  const { view } = opts;
  const status = ref<LiveStatus>('stopped');
  const writes = useLiveWrites();
  let stream: { close(): void } | null = null;
  let queue: LiveEvent[] = [];
  let overflow = false;
  /** Until the first page is loaded, events wait (they are applied on top of it). */
  let holding = true;
  let frame = 0;
  /** Records whose creation was counted in `total` without showing them here (addRecord must not count them again). */
  const counted = new Set<string>();

  // ---------- the stream ----------

  /** Opens the table's subscription; resolves when it is open (or after OPEN_WAIT_MS, whichever first). */
  function start(tableId: string): Promise<void> {
    stop();
    holding = true;
    let opened = false;
    let waited = false;
    let resolve!: () => void;
    const ready = new Promise<void>((r) => (resolve = r));
    const timer = setTimeout(() => {
      waited = true;
      resolve();
    }, OPEN_WAIT_MS);
    stream = openEventStream({
      query: TABLE_EVENTS,
      variables: { t: tableId },
      field: 'tableEvents',
      onEvent: enqueue,
      onOpen(resumed) {
        if (!opened) {
          opened = true;
          clearTimeout(timer);
          resolve();
          // The page loaded before the stream opened: what happened in between is read again.
          if (waited) resync();
        } else if (!resumed) resync();
      },
      onStatus: (s) => (status.value = s),
    });
    return ready;
  }
  function stop() {
    stream?.close();
    stream = null;
    queue = [];
    overflow = false;
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    clearTimeout(refetchTimer);
    refetchTimer = undefined;
    writes.clear();
    counted.clear();
    status.value = 'stopped';
  }
  /** The first page is shown: apply what arrived meanwhile. */
  function release() {
    holding = false;
    schedule();
  }
  onUnmounted(stop);

  function enqueue(e: LiveEvent) {
    if (e.tableId && e.tableId !== opts.tableId()) return;
    if (queue.length >= MAX_QUEUE) {
      queue = [];
      overflow = true;
    } else if (!overflow) queue.push(e);
    schedule();
  }
  function schedule() {
    if (!frame && !holding) frame = requestAnimationFrame(flush);
  }

  // ---------- refetching ----------

  let refetchTimer: ReturnType<typeof setTimeout> | undefined;
  let refetchSince = 0;
  let refetchFields = false;
  /** Created records that asked for a refetch: when this tab added them itself they are shown already. */
  const refetchFor = new Set<string>();
  let refetchOther = false;
  function requestRefetch(opt: { fields?: boolean; created?: string } = {}) {
    if (opt.fields) refetchFields = true;
    if (opt.created) refetchFor.add(opt.created);
    else refetchOther = true;
    const now = Date.now();
    if (!refetchTimer) refetchSince = now;
    clearTimeout(refetchTimer);
    refetchTimer = setTimeout(runRefetch, now - refetchSince > REFETCH_MAX_WAIT_MS ? 0 : REFETCH_DEBOUNCE_MS);
  }
  async function runRefetch() {
    refetchTimer = undefined;
    const fields = refetchFields;
    const needed = refetchOther || [...refetchFor].some((id) => !view.rows.value.some((r) => r.id === id));
    refetchFields = false;
    refetchOther = false;
    refetchFor.clear();
    if (fields) await opts.refreshFields().catch(() => {});
    if (fields || needed) await view.loadRecords({ quiet: true });
  }
  function resync() {
    requestRefetch({ fields: true });
  }

  // ---------- applying a batch ----------

  /** Field names the filter and sort read: a change to one may move a record in or out of the page. */
  function viewFieldNames(): Set<string> {
    const ids = new Set([...(view.filterCount.value ? filterFieldIds(view.filter.value) : []), ...view.sort.value.map((k) => k.fieldId)]);
    return new Set(opts.fields.value.filter((f) => ids.has(f.id)).map((f) => f.name));
  }

  function flush() {
    frame = 0;
    if (holding) return;
    const batch = queue;
    queue = [];
    if (overflow) {
      overflow = false;
      resync();
      return;
    }
    if (!batch.length) return;

    let rows = view.rows.value;
    let copied = false;
    const edit = () => {
      if (!copied) rows = rows.slice();
      copied = true;
    };
    const indexOf = (id: string | null) => (id ? rows.findIndex((r) => r.id === id) : -1);
    const plain = !view.filterCount.value && !view.sort.value.length;
    const viewFields = plain ? new Set<string>() : viewFieldNames();
    const { page, size } = view.shown.value;
    let total = view.total.value;
    const created: string[] = [];
    const deleted: string[] = [];
    // A page load in flight may have read before these events: it is followed by one more.
    if (view.loading.value) requestRefetch();

    for (const e of batch) {
      const i = indexOf(e.recordId);
      const userId = e.actor?.type === 'user' ? e.actor.id : undefined;
      switch (e.type) {
        case 'record.updated': {
          const { values, own } = writes.filter(e);
          if (i >= 0 && values && Object.keys(values).length) {
            edit();
            const r = rows[i];
            rows[i] = { ...r, fields: { ...r.fields, ...values }, updatedAt: e.at, updatedBy: userId ?? r.updatedBy };
          }
          // The grid keeps a record the user just edited where it is; another's change to a filtered or sorted field moves it.
          if (!own && viewFields.size && (e.data?.changed_fields ?? []).some((n: string) => viewFields.has(n))) requestRefetch();
          break;
        }
        case 'record.created': {
          const row: RecordRow = { id: e.recordId!, fields: { ...(e.data?.after ?? {}) }, createdAt: e.at, updatedAt: e.at, createdBy: userId ?? null, updatedBy: userId ?? null };
          if (i >= 0) {
            edit();
            rows[i] = { ...rows[i], fields: { ...rows[i].fields, ...row.fields } };
          } else if (!plain) requestRefetch({ created: row.id });
          // In creation order a new record comes last: on this page when it shows the end of the table and has room.
          else if ((page - 1) * size + rows.length >= total && rows.length < size) {
            edit();
            rows.push(row);
            total += 1;
            created.push(row.id);
          } else {
            total += 1;
            counted.add(row.id);
          }
          break;
        }
        case 'record.deleted': {
          if (i >= 0) {
            edit();
            rows.splice(i, 1);
            total = Math.max(0, total - 1);
            deleted.push(e.recordId!);
            // A later page's first record moves up into this one.
            if ((page - 1) * size + rows.length < total) requestRefetch();
          } else requestRefetch(); // elsewhere in the table: the page may shift and the count changes
          break;
        }
        case 'field.created':
        case 'field.updated':
        case 'field.deleted':
          requestRefetch({ fields: true });
          break;
        case 'table.updated':
        case 'table.deleted':
        case 'view.created':
        case 'view.updated':
        case 'view.deleted':
          opts.onTableEvent(e);
          break;
        default:
          break; // anything newer: nothing the grid shows
      }
    }
    if (copied) view.rows.value = rows;
    view.total.value = total;
    if (deleted.length) {
      view.selection.forget(deleted);
      opts.onDeleted?.(deleted);
    }
    if (created.length) opts.onCreated?.(created);
  }

  return {
    status,
    start,
    stop,
    release,
    writes,
    /** addRecord's answer: whether an event already counted this record in the total. */
    alreadyCounted: (id: string) => counted.delete(id),
  };
}

export type LiveTable = ReturnType<typeof useLiveTable>;
