// The one rule for runs a restart cut off: at start, whatever a run log left `running` is marked failed, never left running.
import type Database from 'better-sqlite3';
import { nowIso } from '../ids.js';

export const INTERRUPTED = 'interrupted: the server stopped during the run';

/** Fails the runs of `table` (workflow_runs or plugin_runs) still marked running, with the same error everywhere. */
export function failInterruptedRuns(sqlite: Database.Database, table: 'workflow_runs' | 'plugin_runs'): void {
  sqlite.prepare(`UPDATE ${table} SET status = 'failed', finished_at = ?, error = ? WHERE status = 'running'`).run(nowIso(), INTERRUPTED);
}
