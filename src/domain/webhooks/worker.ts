// Delivers queued webhook deliveries off the request path: claims due ones from the durable queue under a lease (once
// across processes), POSTs each signed event through the SSRF-guarded fetch, and records the outcomes in batches.
// Woken when deliveries commit (here or, by announcement, in another process) and when a retry falls due.
import { and, asc, count, eq, gt, inArray, isNotNull } from 'drizzle-orm';
import { first, type ClaimedDelivery, type Store } from '../../db/store.js';
import { nowIso } from '../../ids.js';
import type { GuardedFetch } from '../../net/ssrf-guard.js';
import { leaseUntil } from '../interrupted-runs.js';
import { createOutcomeRecorder, type Outcome } from './outcomes.js';
import type { DeliveryQueue } from './queue.js';
import { signatureHeaders } from './shapes.js';

/** The start of a receiver's answer kept in `last_error` when it is not a 2xx. */
const ERROR_BODY_CHARS = 200;

export function createWebhookWorker(opts: {
  store: Store;
  queue: DeliveryQueue;
  /** Outbound HTTP through the SSRF guard, with the webhook timeout. */
  fetch: GuardedFetch;
  /** Delays between attempts (WEBHOOK_RETRY_SCHEDULE_MS). */
  schedule: number[];
  timeoutMs: number;
  userAgent: string;
  /** Attempts in flight at once. */
  concurrency?: number;
  /** Milliseconds since the last request arrived: deliveries step aside while the server is answering requests. */
  sinceActivity?: () => number;
  /** How long a claimed delivery stays this process's without renewal (default 30 s): after a crash, others take it then. */
  leaseMs?: number;
  /** How often the queue is looked at without being woken (retries due, deliveries of a process that died). */
  pollMs?: number;
}) {
  const { store, queue } = opts;
  const { webhooks, webhookDeliveries } = store.schema;
  const concurrency = opts.concurrency ?? 32;
  const leaseMs = opts.leaseMs ?? Math.max(30_000, opts.timeoutMs * 3);
  const pollMs = opts.pollMs ?? 5_000;
  const record = createOutcomeRecorder(store, queue, opts.schedule);
  /** Deliveries claimed and not yet recorded: their leases are renewed. */
  const held = new Set<string>();

  let active = 0;
  let pumping = false;
  let rewake = false;
  let stopped = false;
  const idleWaiters: Array<() => void> = [];

  /** The attempt of one delivery: its outcome, never a throw. */
  async function attempt(d: ClaimedDelivery, target: { url: string; secret: string; enabled: boolean } | undefined): Promise<Outcome> {
    if (!target?.enabled) return { delivery: d, ok: null, status: null, error: null };
    const headers = {
      'content-type': 'application/json', 'user-agent': opts.userAgent, ...signatureHeaders(target.secret, d.eventId, d.payload),
    };
    try {
      const answer = await opts.fetch({ url: target.url, method: 'POST', headers, body: d.payload, redirect: 'manual' });
      if (answer.status >= 200 && answer.status <= 299) return { delivery: d, ok: true, status: answer.status, error: null };
      const location = answer.headers.location ? ` (redirect to ${answer.headers.location} not followed)` : '';
      const text = answer.body.subarray(0, ERROR_BODY_CHARS * 4).toString('utf8').slice(0, ERROR_BODY_CHARS).trim();
      return { delivery: d, ok: false, status: answer.status, error: `HTTP ${answer.status}${location}${text ? `: ${text}` : ''}` };
    } catch (e) {
      const err = e as Error & { code?: string };
      const message = err.code === 'UPSTREAM_TIMEOUT' ? `TIMEOUT: no answer within ${opts.timeoutMs} ms` : `${err.code ?? 'ERROR'}: ${err.message}`;
      return { delivery: d, ok: false, status: null, error: message };
    }
  }

  // Outcomes wait here and are written together: one transaction for all that finished meanwhile.
  let outcomes: Outcome[] = [];
  let flushing: Promise<void> | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let retryAt = Infinity;
  function retryWake(at: number) {
    if (stopped || at >= retryAt) return;
    if (retryTimer) clearTimeout(retryTimer);
    retryAt = at;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      retryAt = Infinity;
      wake();
    }, Math.max(0, at - Date.now()));
    retryTimer.unref();
  }
  function flush(): Promise<void> {
    if (flushing) return flushing;
    flushing = (async () => {
      while (outcomes.length) {
        const batch = outcomes;
        outcomes = [];
        try {
          const nextDue = await record(batch);
          if (nextDue !== null) retryWake(nextDue);
        } catch (e) {
          // Not recorded: the leases lapse and the deliveries are attempted again (at least once, never lost).
          console.error('recording webhook delivery outcomes failed:', e);
        }
        for (const o of batch) held.delete(o.delivery.id);
      }
    })().finally(() => {
      flushing = null;
      void pump();
    });
    return flushing;
  }

  // Requests come first: while they arrive, deliveries wait for a short quiet spell, but a claim happens every MAX_WAIT_MS.
  const QUIET_MS = 10;
  const MAX_WAIT_MS = 50;
  const RETRY_MS = 1000;
  let lastClaim = 0;
  let deferred: NodeJS.Timeout | null = null;
  const busy = () => !!opts.sinceActivity && opts.sinceActivity() < QUIET_MS && Date.now() - lastClaim < MAX_WAIT_MS;
  const later = (ms: number) => {
    deferred ??= setTimeout(() => {
      deferred = null;
      void pump();
    }, ms);
  };
  function settle() {
    if (active === 0 && !pumping && !flushing && !outcomes.length) idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  async function nextDue(now: string) {
    const d = webhookDeliveries;
    const next = await first(store.db.select({ at: d.nextAttemptAt }).from(d)
      .where(and(eq(d.status, 'pending'), gt(d.nextAttemptAt, now))).orderBy(asc(d.nextAttemptAt)).limit(1));
    if (next?.at) retryWake(Date.parse(next.at));
  }

  /** Claims due deliveries in batches up to `concurrency` in flight, and attempts them. */
  async function pump(): Promise<void> {
    if (pumping) {
      rewake = true;
      return;
    }
    if (stopped) return settle();
    if (busy()) return later(QUIET_MS);
    pumping = true;
    rewake = false;
    let failed = false;
    try {
      while (!stopped && active < concurrency) {
        const now = nowIso();
        const want = concurrency - active;
        const batch = await store.claimDueDeliveries(now, leaseUntil(leaseMs), want);
        lastClaim = Date.now();
        // The queue is drained for now: be woken when the next retry falls due (queued here or by another process).
        if (batch.length < want) await nextDue(now);
        if (!batch.length) break;
        const ids = [...new Set(batch.map((d) => d.webhookId))];
        const targets = new Map((await store.db.select({ id: webhooks.id, url: webhooks.url, secret: webhooks.secret, enabled: webhooks.enabled })
          .from(webhooks).where(inArray(webhooks.id, ids))).map((w) => [w.id, w]));
        for (const d of batch) {
          held.add(d.id);
          active++;
          void attempt(d, targets.get(d.webhookId)).then((o) => {
            active--;
            outcomes.push(o);
            void flush();
          });
        }
        if (busy()) break;
      }
    } catch (e) {
      console.error('the webhook worker failed to claim deliveries:', e);
      failed = true;
    } finally {
      pumping = false;
    }
    if (failed && !stopped) later(RETRY_MS);
    else if (rewake && !stopped) return pump();
    settle();
  }
  const wake = () => void pump();

  let upkeep: NodeJS.Timeout | null = null;
  async function renewLeases() {
    if (!held.size) return;
    const ids = [...held];
    await store.transaction(async (tx) => {
      // Only leases still held: an attempt recorded while this waited for the lock left its delivery pending for a retry
      // with no lease, and leasing it again would hold that retry back for a whole lease.
      await tx.db.update(webhookDeliveries).set({ leaseUntil: leaseUntil(leaseMs) })
        .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, 'pending'), isNotNull(webhookDeliveries.leaseUntil)));
    });
  }

  return {
    /** Starts on the queue: deliveries queued before a restart, and those whose process died, are due now or soon. */
    start() {
      if (stopped) return;
      queue.setWake(wake);
      upkeep = setInterval(() => {
        renewLeases().catch((e) => console.error('renewing webhook delivery leases failed:', e));
        wake();
      }, Math.min(pollMs, leaseMs / 3));
      upkeep.unref();
      wake();
    },
    wake,
    /** Deliveries pending, for /metrics. */
    async queueDepth(): Promise<number> {
      return (await first(store.db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending'))))!.n;
    },
    /** Resolves once no attempt is in flight and every outcome is recorded (tests and shutdown). */
    idle(): Promise<void> {
      const done = new Promise<void>((resolve) => idleWaiters.push(resolve));
      wake();
      return done;
    },
    /** Stops claiming, lets the attempts in flight end (each within the timeout) and records them. */
    async stop() {
      stopped = true;
      if (upkeep) clearInterval(upkeep);
      if (deferred) clearTimeout(deferred);
      if (retryTimer) clearTimeout(retryTimer);
      deferred = null;
      if (active || pumping || flushing || outcomes.length) await new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;
