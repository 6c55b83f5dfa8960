// Runs queued jobs off the request path, by the same rules as workflow runs: claimed once across processes (a lease
// renewed while it runs), one at a time per process, stepping aside between chunks while requests arrive; a job a
// stopped process left running is failed once its lease lapses, with what it imported kept and counted.
import type { ClaimedJob, Store } from '../db/store.js';
import { AppError } from '../errors.js';
import { nowIso } from '../ids.js';
import { leaseUntil } from './interrupted-runs.js';
import { JobStopped, type Importer } from './imports/import-job.js';
import { JOB_INTERRUPTED, type JobService } from './jobs.js';

export function createJobRunner(opts: {
  store: Store;
  jobs: JobService;
  importer: Importer;
  /** Milliseconds since the last request arrived. */
  sinceActivity?: () => number;
  leaseMs?: number;
}) {
  const { store, jobs, importer } = opts;
  const leaseMs = opts.leaseMs ?? 30_000;
  let current: ClaimedJob | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let again = false;
  let upkeep: NodeJS.Timeout | undefined;
  const idleWaiters: Array<() => void> = [];

  // Requests come first: while they arrive a chunk waits for a quiet spell of QUIET_MS, at most MAX_WAIT_MS.
  const QUIET_MS = 10;
  const MAX_WAIT_MS = 100;
  async function pause() {
    await new Promise((resolve) => setImmediate(resolve));
    const since = opts.sinceActivity;
    if (!since) return;
    const started = Date.now();
    while (since() < QUIET_MS && Date.now() - started < MAX_WAIT_MS && !stopped) await new Promise((r) => setTimeout(r, QUIET_MS));
  }

  async function execute(job: ClaimedJob) {
    let status: 'succeeded' | 'failed' | 'cancelled' = 'succeeded';
    let error: string | null = null;
    try {
      await importer.run(job, { stopping: () => stopped, leaseUntil: () => leaseUntil(leaseMs), pause });
    } catch (e) {
      if (e instanceof JobStopped) {
        status = e.why === 'cancelled' ? 'cancelled' : 'failed';
        if (e.why === 'stopping') error = JOB_INTERRUPTED;
      } else {
        status = 'failed';
        error = e instanceof AppError ? e.message : `internal error: ${(e as Error).message}`;
        if (!(e instanceof AppError)) console.error(`job ${job.id} failed:`, e);
      }
    }
    await jobs.finish(job.id, status, error);
    importer.discard((job.input as { upload?: string }).upload);
  }

  /** Claims and runs queued jobs one after another until none is left. */
  async function loop() {
    try {
      while (!stopped) {
        const job = await store.claimQueuedJob(nowIso(), leaseUntil(leaseMs), importer.spoolId);
        if (!job) {
          if (!again) break;
          again = false;
          continue;
        }
        current = job;
        try {
          await execute(job);
        } finally {
          current = undefined;
        }
      }
    } catch (e) {
      console.error('the job runner failed to claim a job:', e);
    } finally {
      running = undefined;
      idleWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  function wake() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = loop();
  }

  async function sweep() {
    for (const input of await jobs.failInterrupted()) importer.discard(input.upload);
  }

  return {
    /** Fails jobs a stopped process left running (lease lapsed), then starts on the queue. */
    async start() {
      await sweep();
      await importer.sweepUploads(await jobs.heldUploads()).catch((e) => console.error('removing stale uploads failed:', e));
      jobs.setWake(wake);
      store.onAnnouncement('jobs', wake);
      upkeep = setInterval(() => {
        if (current) jobs.renewLeases([current.id], leaseUntil(leaseMs)).catch((e) => console.error('renewing job leases failed:', e));
        sweep().catch((e) => console.error('marking interrupted jobs failed:', e));
        wake();
      }, leaseMs / 3);
      upkeep.unref();
      wake();
    },
    wake,
    queueDepth: () => jobs.queueDepth(),
    /** Resolves once no job is running or queued for this process (tests). */
    idle(): Promise<void> {
      const done = new Promise<void>((resolve) => idleWaiters.push(resolve));
      if (!running) wake();
      if (!running) idleWaiters.splice(0).forEach((resolve) => resolve());
      return done;
    },
    /** Stops at the running job's next chunk: it is marked failed (interrupted) with its progress kept. */
    async stop() {
      stopped = true;
      if (upkeep) clearInterval(upkeep);
      await running;
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
