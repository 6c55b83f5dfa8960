// The durable job table (contract section 15): jobs are queued rows, read and cancelled by the user who started them
// and the base's admins; progress is written with each chunk of work so a restart keeps what was done and counts it.
import { and, count, eq, inArray, isNull, lt, or } from 'drizzle-orm';
import { first, type UnitOfWork } from '../db/store.js';
import { forbidden, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { atLeast, type Access } from './access.js';
import type { Actor, Deps } from './deps.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
/** One row that was not imported; `row` counts from 1 at the first data row. */
export interface RowError { row: number; column: string | null; field: string | null; message: string }

export interface ApiJob {
  id: string;
  type: 'import' | 'export';
  status: JobStatus;
  table_id: string | null;
  processed: number;
  total: number | null;
  imported: number;
  failed: number;
  errors: RowError[];
  error: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Errors a job keeps (contract: the first 1000). */
export const MAX_JOB_ERRORS = 1000;
export const JOB_INTERRUPTED = 'interrupted: the server stopped during the job; the rows counted as imported are kept';

export function createJobService({ store }: Deps, access: Access) {
  const { jobs } = store.schema;
  /** Called when a job is queued (the runner of this process looks at the queue). */
  let wake: () => void = () => {};
  /** Told when a running job is asked to stop, so this process's runner need not wait for its next look at the row. */
  const cancelListeners = new Set<(jobId: string) => void>();

  function toApi(r: typeof jobs.$inferSelect): ApiJob {
    return {
      id: r.id, type: r.type, status: r.status, table_id: r.tableId, processed: r.processed, total: r.total ?? null, imported: r.imported,
      failed: r.failed, errors: (r.errors ?? []) as RowError[], error: r.error, created_by: r.createdBy, created_at: r.createdAt,
      started_at: r.startedAt, finished_at: r.finishedAt,
    };
  }

  /** The job if the actor may see it: its starter or an admin of its base; 404 for a job that does not exist. */
  async function visible(actor: Actor, id: string) {
    const row = await first(store.db.select().from(jobs).where(eq(jobs.id, id)).limit(1));
    if (!row) throw notFound(`Job ${id} not found`);
    if (row.createdBy === actor.id) return row;
    const role = await access.roleIn(actor, row.baseId);
    if (role === null) throw notFound(`Job ${id} not found`);
    if (!atLeast(role, 'admin')) throw forbidden('Only the user who started a job and the base\'s admins may see it');
    return row;
  }

  return {
    toApi,
    setWake(fn: () => void) {
      wake = fn;
    },
    onCancel(listener: (jobId: string) => void) {
      cancelListeners.add(listener);
    },

    /** Queues a job inside `tx`; the runner is woken once it commits. */
    async enqueue(tx: UnitOfWork, job: { type: 'import'; baseId: string; tableId: string; createdBy: string; input: Record<string, unknown>; spool: string }): Promise<string> {
      const id = newId('job');
      await tx.db.insert(jobs).values({ id, ...job, status: 'queued', errors: [], createdAt: nowIso() });
      tx.announce('jobs');
      tx.afterCommit(() => wake());
      return id;
    },

    async getJob(actor: Actor, id: string): Promise<ApiJob> {
      return toApi(await visible(actor, id));
    },

    /** A queued job is cancelled at once; a running one is asked to stop and stops at its next chunk. */
    async cancelJob(actor: Actor, id: string): Promise<ApiJob> {
      await visible(actor, id);
      const now = nowIso();
      await store.transaction(async (tx) => {
        await tx.db.update(jobs).set({ status: 'cancelled', finishedAt: now }).where(and(eq(jobs.id, id), eq(jobs.status, 'queued')));
        await tx.db.update(jobs).set({ cancelRequested: true }).where(and(eq(jobs.id, id), eq(jobs.status, 'running')));
        tx.announce('jobs');
      });
      for (const l of cancelListeners) l(id);
      return toApi((await first(store.db.select().from(jobs).where(eq(jobs.id, id))))!);
    },

    /** Whether someone asked the job to stop (read inside the chunk's transaction, so any process's cancel counts). */
    async cancelRequested(tx: UnitOfWork, id: string): Promise<boolean> {
      return !!(await first(tx.db.select({ c: jobs.cancelRequested }).from(jobs).where(eq(jobs.id, id))))?.c;
    },

    /** Writes progress inside the chunk's transaction (with the rows it wrote), and renews the lease. */
    async progress(tx: UnitOfWork, id: string, p: { processed: number; imported: number; failed: number; total?: number | null; errors?: RowError[]; leaseUntil: string }) {
      await tx.db.update(jobs).set({
        processed: p.processed, imported: p.imported, failed: p.failed, leaseUntil: p.leaseUntil,
        ...(p.total !== undefined ? { total: p.total } : {}), ...(p.errors ? { errors: p.errors } : {}),
      }).where(eq(jobs.id, id));
    },

    async finish(id: string, status: 'succeeded' | 'failed' | 'cancelled', error: string | null = null) {
      await store.transaction(async (tx) => {
        await tx.db.update(jobs).set({ status, error, finishedAt: nowIso(), leaseUntil: null }).where(eq(jobs.id, id));
      });
    },

    async renewLeases(ids: string[], leaseUntil: string) {
      if (!ids.length) return;
      await store.transaction(async (tx) => {
        await tx.db.update(jobs).set({ leaseUntil }).where(and(inArray(jobs.id, ids), eq(jobs.status, 'running')));
      });
    },

    /**
     * Marks jobs left running by a stopped process failed once their lease lapsed, keeping their counts; returns their
     * inputs so the spooled files can go.
     */
    async failInterrupted(): Promise<Array<Record<string, unknown>>> {
      const now = nowIso();
      return store.transaction(async (tx) => {
        const lapsed = and(eq(jobs.status, 'running'), or(isNull(jobs.leaseUntil), lt(jobs.leaseUntil, now)));
        const rows = await tx.db.select({ input: jobs.input }).from(jobs).where(lapsed);
        if (rows.length) await tx.db.update(jobs).set({ status: 'failed', error: JOB_INTERRUPTED, finishedAt: now, leaseUntil: null }).where(lapsed);
        return rows.map((r) => r.input);
      });
    },

    /** The uploads of jobs still queued or running (the others' files may go). */
    async heldUploads(): Promise<Set<string>> {
      const rows = await store.db.select({ input: jobs.input }).from(jobs).where(inArray(jobs.status, ['queued', 'running']));
      return new Set(rows.map((r) => String((r.input as { upload?: unknown }).upload)));
    },

    /** Jobs queued or running, for /metrics. */
    async queueDepth(): Promise<number> {
      return (await first(store.db.select({ n: count() }).from(jobs).where(inArray(jobs.status, ['queued', 'running']))))!.n;
    },
  };
}

export type JobService = ReturnType<typeof createJobService>;
