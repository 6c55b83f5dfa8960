// This tab's own cell writes as the live grid sees them: while a write is in flight, events do not overwrite its cell,
// and once its answer is shown, events older than that answer are not applied over it.
import { session } from '../../api';
import type { LiveEvent } from '../../eventStream';
import type { RecordRow } from '../../components/fieldTypes';

interface Write {
  recordId: string;
  field: string;
  /** The answer's updatedAt once it came; events before it are older than what the row shows. */
  answeredAt: string | null;
  /** The event of this write arrived (so the row already holds it and what followed). */
  seen: boolean;
  expires: number;
}

/** How long a write is remembered at most (its event may never come: a write that changed nothing has none). */
const KEEP_MS = 10_000;

export function useLiveWrites() {
  const writes = new Map<string, Write[]>();
  const now = () => Date.now();

  function prune(recordId: string) {
    const list = (writes.get(recordId) ?? []).filter((w) => w.expires > now() && !(w.seen && w.answeredAt !== null));
    if (list.length) writes.set(recordId, list);
    else writes.delete(recordId);
    return list;
  }

  return {
    /** A cell write is about to be sent; returns its handle. */
    begin(recordId: string, field: string): Write {
      const w: Write = { recordId, field, answeredAt: null, seen: false, expires: now() + KEEP_MS };
      writes.set(recordId, [...(writes.get(recordId) ?? []), w]);
      return w;
    },
    /**
     * The write's answer came: true when the grid should show it. When the write's own event came first, the row
     * already holds it and anything after it, and the answer would be older.
     */
    answered(w: Write, row: RecordRow): boolean {
      w.answeredAt = row.updatedAt;
      w.expires = now() + KEEP_MS;
      prune(w.recordId);
      return !w.seen;
    },
    /** The write failed: forget it. */
    failed(w: Write) {
      w.seen = true;
      w.answeredAt = '';
      prune(w.recordId);
    },
    /**
     * Which of an event's values to apply to its row (all of `after` when no write of this tab is pending on the
     * record), or null to skip the event; `own` says the event is one of this tab's writes.
     */
    filter(e: LiveEvent): { values: Record<string, unknown> | null; own: boolean } {
      const after: Record<string, unknown> = e.data?.after ?? {};
      if (!e.recordId || !writes.has(e.recordId)) return { values: after, own: false };
      const changed: string[] = e.data?.changed_fields ?? Object.keys(after);
      let own = false;
      for (const w of writes.get(e.recordId)!) {
        // Our event: by this user, on that field. (The same user in another tab writing the same cell at the same moment is taken for it.)
        if (!w.seen && e.actor?.id === session.user?.id && changed.includes(w.field)) {
          w.seen = true;
          own = true;
        }
      }
      const open = prune(e.recordId).filter((w) => !w.seen);
      // Events arrive in commit order: one before our write's own event that is older than the answer shown is stale.
      if (!own && open.some((w) => w.answeredAt !== null && e.at < w.answeredAt)) return { values: null, own };
      const values = { ...after };
      // A cell whose write is still in flight keeps what the user wrote.
      for (const w of open) if (w.answeredAt === null) delete values[w.field];
      return { values, own };
    },
    clear() {
      writes.clear();
    },
  };
}

export type LiveWrites = ReturnType<typeof useLiveWrites>;
