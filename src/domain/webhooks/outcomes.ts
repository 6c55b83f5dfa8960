// Records what the delivery worker's attempts came to, many in one transaction: delivered, retried later on the schedule,
// or failed once the schedule is spent; counts each webhook's events in a row that failed and disables it at the limit.
import { and, eq, gt, inArray, sql } from 'drizzle-orm';
import type { ClaimedDelivery, Db, Store, UnitOfWork } from '../../db/store.js';
import { nowIso } from '../../ids.js';
import type { DeliveryQueue } from './queue.js';
import { DISABLE_AFTER, PING } from './shapes.js';

/** One attempt's result; `ok: null` when no attempt was made (the webhook was disabled or deleted after the claim). */
export interface Outcome {
  delivery: ClaimedDelivery;
  ok: boolean | null;
  status: number | null;
  error: string | null;
}

/** `schedule`: the delays between attempts; a delivery has `schedule.length + 1` attempts in all. */
export function createOutcomeRecorder(store: Store, queue: DeliveryQueue, schedule: number[]) {
  const { webhooks, webhookDeliveries: d } = store.schema;
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  // Prepared once per connection: every attempt ends with it. Only a pending delivery changes (a claim never outlives it).
  const settle = (db: Db) => db.update(d).set({
    status: p('status'), attempts: p('attempts'), lastStatus: p('lastStatus'), lastError: p('lastError'), nextAttemptAt: p('nextAttemptAt'),
    deliveredAt: p('deliveredAt'), leaseUntil: null,
  }).where(and(eq(d.id, sql.placeholder('id')), eq(d.status, 'pending'))).prepare();
  const resetFailures = (db: Db) => db.update(webhooks).set({ consecutiveFailures: 0 })
    .where(and(eq(webhooks.id, sql.placeholder('id')), gt(webhooks.consecutiveFailures, 0))).prepare();

  /** Applies each webhook's run of delivered (reset) and finally failed (one more) events to its count, in order. */
  async function count(tx: UnitOfWork, runs: Map<string, Array<{ ok: boolean; error: string | null }>>) {
    let disabled = false;
    for (const [webhookId, run] of runs) {
      if (run.every((r) => r.ok)) {
        await tx.prepared(resetFailures).execute({ id: webhookId });
        continue;
      }
      const [w] = await tx.db.select({ n: webhooks.consecutiveFailures, enabled: webhooks.enabled }).from(webhooks).where(eq(webhooks.id, webhookId)).limit(1);
      if (!w) continue;
      let n = w.n;
      for (const r of run) n = r.ok ? 0 : n + 1;
      const last = run.filter((r) => !r.ok).pop()?.error ?? 'unknown error';
      if (w.enabled && n >= DISABLE_AFTER) {
        disabled = true;
        await tx.db.update(webhooks).set({
          consecutiveFailures: n, enabled: false, updatedAt: nowIso(),
          disabledReason: `Disabled after ${n} events in a row failed to deliver (every attempt); the last error: ${last}`,
        }).where(eq(webhooks.id, webhookId));
      } else {
        await tx.db.update(webhooks).set({ consecutiveFailures: n }).where(eq(webhooks.id, webhookId));
      }
    }
    if (disabled) await queue.changed(tx);
  }

  /** Records `outcomes` in one transaction; answers the earliest time (ms) a retry it scheduled is due, or null. */
  return async function record(outcomes: Outcome[]): Promise<number | null> {
    const now = Date.now();
    const at = new Date(now).toISOString();
    let nextDue: number | null = null;
    const runs = new Map<string, Array<{ ok: boolean; error: string | null }>>();
    const released: string[] = [];
    const updates = outcomes.flatMap((o) => {
      const { delivery } = o;
      if (o.ok === null) {
        released.push(delivery.id);
        return [];
      }
      const attempts = delivery.attempts + 1;
      const retryIn = o.ok ? undefined : schedule[attempts - 1];
      const status = o.ok ? 'delivered' : retryIn === undefined ? 'failed' : 'pending';
      if (retryIn !== undefined) nextDue = Math.min(nextDue ?? Infinity, now + retryIn);
      // A test ping tells the sender whether the receiver answers; it is not an event of the base, so it is not counted.
      if (status !== 'pending' && delivery.eventType !== PING) {
        const run = runs.get(delivery.webhookId) ?? [];
        run.push({ ok: o.ok, error: o.error });
        runs.set(delivery.webhookId, run);
      }
      return [{
        id: delivery.id, status, attempts, lastStatus: o.status, lastError: o.ok ? null : o.error,
        nextAttemptAt: retryIn === undefined ? null : new Date(now + retryIn).toISOString(), deliveredAt: o.ok ? at : null,
      }];
    });
    await store.transaction(async (tx) => {
      for (const u of updates) await tx.prepared(settle).execute(u);
      if (released.length) await tx.db.update(d).set({ leaseUntil: null }).where(inArray(d.id, released));
      if (runs.size) await count(tx, runs);
    });
    return nextDue;
  };
}
