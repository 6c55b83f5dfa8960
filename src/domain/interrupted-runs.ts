// The one rule for runs a crash cut off: a run whose lease has lapsed while it was `running` is marked failed, never left
// running. Processes renew the leases of the runs they execute; any process over the database applies the rule, at its
// start and periodically, so the runs of a process that died are failed by the ones still alive.
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Store } from '../db/store.js';
import { nowIso } from '../ids.js';

export const INTERRUPTED = 'interrupted: the server stopped during the run';

/** The lease a run's process holds while it runs it, as an ISO time `ms` from now. */
export const leaseUntil = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Fails the runs of `table` (workflow_runs or plugin_runs) still marked running whose lease has lapsed. */
export async function failInterruptedRuns(store: Store, table: 'workflow_runs' | 'plugin_runs'): Promise<void> {
  const { workflowRuns, pluginRuns } = store.schema;
  const now = nowIso();
  const failed = { status: 'failed' as const, finishedAt: now, error: INTERRUPTED, leaseUntil: null };
  await store.transaction(async (tx) => {
    if (table === 'workflow_runs') {
      await tx.db.update(workflowRuns).set(failed)
        .where(and(eq(workflowRuns.status, 'running'), or(isNull(workflowRuns.leaseUntil), lt(workflowRuns.leaseUntil, now))));
    } else {
      await tx.db.update(pluginRuns).set(failed)
        .where(and(eq(pluginRuns.status, 'running'), or(isNull(pluginRuns.leaseUntil), lt(pluginRuns.leaseUntil, now))));
    }
  });
}

/**
 * Applies the rule to both run logs now and every `everyMs`, so a process that died leaves nothing running for longer
 * than a lease and this period. Returns the function that stops it.
 */
export function startRunUpkeep(store: Store, everyMs: number): () => void {
  const sweep = () => Promise.all([failInterruptedRuns(store, 'workflow_runs'), failInterruptedRuns(store, 'plugin_runs')])
    .catch((e) => console.error('marking interrupted runs failed:', e));
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
