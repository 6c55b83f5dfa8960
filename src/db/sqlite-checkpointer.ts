// Checkpoints a SQLite file's write-ahead log on a worker thread, so that copying the log into the database and the
// fsync that ends it never block the event loop (SQLite's own autocheckpoint runs them inside whichever commit fills the log).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The write connection's own autocheckpoint stays as a backstop, at a log of this many pages (40 MB at 4 KiB), should the
 * thread fall behind or fail.
 */
export const BACKSTOP_PAGES = 10000;

// Plain CommonJS run with `eval`: the server is bundled into one file, so the thread cannot be a module of its own.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
parentPort.on('message', (message) => {
  if (message === 'stop') { db.close(); parentPort.close(); return; }
  let failed = null;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (e) { failed = String(e && e.message || e); }
  parentPort.postMessage(failed);
});
`;

/** How often the log is checkpointed (when anything was committed): it holds about this long's writes. */
const EVERY_MS = 100;

/** The store's in-process write lock: transactions take turns on the one write connection. */
interface WriteLock {
  acquire(): Promise<void>;
  release(): void;
}

export type Checkpointer = {
  /** After each commit: the next round copies the log. */
  committed(): void;
  /** Ends the rounds (after one in flight) and the thread; the store's connections close after it. */
  stop(): Promise<void>;
};

/**
 * Starts the thread for `file`. Every EVERY_MS after a commit it copies the log while transactions go on appending to
 * it, then once more holding `lock`, which copies only what came meanwhile: a log copied to its end is started over by
 * the next transaction instead of growing. `onError` hears a checkpoint that failed (the backstop keeps the log bounded).
 */
export function startCheckpointer(file: string, lock: WriteLock, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver } });
  worker.unref();
  let alive = true;
  let pending: (() => void) | undefined;
  const settle = () => {
    const done = pending;
    pending = undefined;
    if (alive) worker.unref();
    done?.();
  };
  worker.on('message', (failed: string | null) => {
    if (failed) onError(failed);
    settle();
  });
  worker.on('error', (e) => onError(e.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => {
    alive = false;
    settle();
    resolve();
  }));

  /** One checkpoint on the thread; resolves when done (a failure goes to `onError`). */
  function checkpoint(): Promise<void> {
    if (!alive || pending) return Promise.resolve();
    return new Promise<void>((resolve) => {
      pending = resolve;
      worker.ref(); // a transaction may be waiting for it
      worker.postMessage('checkpoint');
    });
  }

  let commits = 0;
  let round: Promise<void> | undefined;
  const rounds = setInterval(() => {
    if (commits === 0 || round) return;
    commits = 0;
    round = checkpoint()
      .then(() => lock.acquire().then(() => checkpoint().finally(() => lock.release())))
      // A lock that stays taken past its wait is a transaction's problem, reported there: this round is skipped.
      .catch(() => {})
      .finally(() => { round = undefined; });
  }, EVERY_MS);
  rounds.unref();

  return {
    committed() {
      commits++;
    },
    async stop() {
      clearInterval(rounds);
      await round;
      worker.ref(); // waiting for it must keep the process alive
      worker.postMessage('stop');
      await exited;
    },
  };
}
