// The one rule for runs a restart cut off: at start, whatever a run log left `running` is marked failed, never left running.
import { eq } from 'drizzle-orm';
import type { Store } from '../db/store.js';
import { nowIso } from '../ids.js';

export const INTERRUPTED = 'interrupted: the server stopped during the run';

/** Fails the runs of `table` (workflow_runs or plugin_runs) still marked running, with the same error everywhere. */
export async function failInterruptedRuns(store: Store, table: 'workflow_runs' | 'plugin_runs'): Promise<void> {
  const { workflowRuns, pluginRuns } = store.schema;
  const failed = { status: 'failed' as const, finishedAt: nowIso(), error: INTERRUPTED };
  await store.transaction(async (tx) => {
    if (table === 'workflow_runs') await tx.db.update(workflowRuns).set(failed).where(eq(workflowRuns.status, 'running'));
    else await tx.db.update(pluginRuns).set(failed).where(eq(pluginRuns.status, 'running'));
  });
}
