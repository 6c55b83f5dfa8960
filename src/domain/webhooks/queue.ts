// Queues webhook deliveries inside the transaction that appends the events (the event log's AppendHook), so a change
// that rolls back sends nothing and one that commits is delivered. Keeps which bases have enabled webhooks in memory, so
// a write to a base without any costs one map lookup.
import { and, eq } from 'drizzle-orm';
import { coalesced, type UnitOfWork } from '../../db/store.js';
import { newId, nowIso } from '../../ids.js';
import type { Deps } from '../deps.js';
import type { ApiEvent, EventLog } from '../events.js';
import { wants } from './shapes.js';

/** Rows per INSERT: thirteen columns each, well inside every engine's parameter limit. */
const INSERT_ROWS = 200;

/** A delivery to queue: one event (or a ping) for one webhook. */
export interface NewDelivery {
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: string;
}

export function createDeliveryQueue({ store }: Deps, events: EventLog) {
  const { webhooks, webhookDeliveries } = store.schema;
  /** The bases with at least one enabled webhook; null until first loaded. Replaced once a change has committed. */
  let withWebhooks: Set<string> | null = null;
  let wake: () => void = () => {};

  async function load(uow: UnitOfWork): Promise<Set<string>> {
    return new Set((await uow.db.select({ baseId: webhooks.baseId }).from(webhooks).where(eq(webhooks.enabled, true))).map((r) => r.baseId));
  }
  async function bases(uow: UnitOfWork): Promise<Set<string>> {
    if (withWebhooks) return withWebhooks;
    const loaded = await load(uow);
    uow.afterCommit(() => {
      withWebhooks ??= loaded;
    });
    return loaded;
  }
  // Another process changed its webhooks: load again. Another process queued deliveries: this one may take them too.
  store.onAnnouncement('webhooks', coalesced('webhooks', async () => {
    withWebhooks = await load(store);
  }));
  store.onAnnouncement('deliveries', () => wake());
  // Loaded at once so the first write finds it; should this fail, the first write loads it instead.
  bases(store).catch(() => {});

  async function insert(tx: UnitOfWork, items: NewDelivery[]) {
    const at = nowIso();
    const rows = items.map((d) => ({ id: newId('dlv'), ...d, status: 'pending' as const, attempts: 0, nextAttemptAt: at, createdAt: at }));
    for (let i = 0; i < rows.length; i += INSERT_ROWS) await tx.db.insert(webhookDeliveries).values(rows.slice(i, i + INSERT_ROWS));
    // The worker looks once the transaction has committed; other processes hear of it and may take some.
    tx.afterCommit(() => wake());
    tx.announce('deliveries');
    return rows;
  }

  events.onAppend(async (tx, baseId, appended) => {
    if (!(await bases(tx)).has(baseId)) return;
    // Read again inside the transaction: another process may have deleted or changed one a moment ago (its
    // announcement still on the way), and a delivery must never name a webhook that is gone.
    const targets = await tx.db.select({ id: webhooks.id, events: webhooks.events, tableId: webhooks.tableId }).from(webhooks)
      .where(and(eq(webhooks.baseId, baseId), eq(webhooks.enabled, true)));
    const items: NewDelivery[] = [];
    const bodies = new Map<ApiEvent, string>();
    for (const w of targets) {
      for (const e of appended()) {
        if (!wants(w, e)) continue;
        let payload = bodies.get(e);
        if (payload === undefined) bodies.set(e, (payload = JSON.stringify(e)));
        items.push({ webhookId: w.id, eventId: e.id, eventType: e.type, payload });
      }
    }
    if (items.length) await insert(tx, items);
  });

  return {
    /** Queues deliveries in `tx` (a ping, a redelivery); the worker is woken once it commits. */
    insert,
    /** After a change to a base's webhooks inside `tx`: the set of bases is reloaded, kept once it commits, and announced. */
    async changed(tx: UnitOfWork) {
      const next = await load(tx);
      tx.afterCommit(() => {
        withWebhooks = next;
      });
      tx.announce('webhooks');
    },
    /** The worker registers how to be woken when deliveries are queued. */
    setWake(fn: () => void) {
      wake = fn;
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
