// Executes queued workflow runs off the request path: claims runs from the durable queue, runs their nodes in order
// as the workflow (an editor of its table's base), and records each step. A run left `running` by a crash is marked
// failed at the next start.
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import { first, type ClaimedRun, type Db, type Store } from '../db/store.js';
import { AppError } from '../errors.js';
import { BlockedError, type GuardedFetch } from '../net/ssrf-guard.js';
import { nowIso } from '../ids.js';
import type { WorkflowActor } from './deps.js';
import { parseFilter } from './record-query.js';
import type { FieldService } from './fields.js';
import type { RecordService } from './records.js';
import { resolveTemplates, type TemplateScope } from './templates.js';
import type { RunStep, Workflow, WorkflowNode, WorkflowService } from './workflows.js';
import { failInterruptedRuns, leaseUntil } from './interrupted-runs.js';


/** Thrown by a node to fail its step with a message. */
class StepError extends Error {}

/** Runs a script plugin for the run_script node as the workflow; absent when the runner is built without the plugin runtime. */
export type ScriptRunner = (pluginId: string, params: unknown, context: { actor: WorkflowActor; tableId: string; recordId: string | null }) => Promise<unknown>;

export function createWorkflowRunner(opts: {
  store: Store;
  workflows: WorkflowService;
  records: RecordService;
  fields: FieldService;
  fetch: GuardedFetch;
  runScript?: ScriptRunner;
  concurrency?: number;
  /** Milliseconds since the last request arrived: runs step aside while the server is answering requests. */
  sinceActivity?: () => number;
  /** How long a claimed run stays this process's without renewal (default 30 s): after a crash, others fail it then. */
  leaseMs?: number;
}) {
  const { store, workflows, records, fields } = opts;
  const { tables, workflowRuns } = store.schema;
  const concurrency = opts.concurrency ?? 8;
  /** How long a claimed run is held without renewal; renewed every third of it while it runs. */
  const leaseMs = opts.leaseMs ?? 30_000;
  /** The runs this process is executing, whose leases it renews. */
  const running = new Set<string>();
  // Prepared once on the store (reads outside transactions): every run looks up the base of its table.
  const baseOfTableQuery = store.db.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, sql.placeholder('id'))).limit(1).prepare();
  async function baseOfTable(tableId: string): Promise<string | undefined> {
    return (await baseOfTableQuery.execute({ id: tableId }))[0]?.baseId;
  }

  /** Takes the oldest queued run (queue order) and marks it running, in one transaction; undefined when none is queued. */
  const claim = () => store.claimQueuedRun(nowIso(), leaseUntil(leaseMs));

  // Prepared once per connection: every run ends with it.
  const finishRun = (db: Db) => db.update(workflowRuns).set({
    status: sql`${sql.placeholder('status')}`, finishedAt: sql`${sql.placeholder('finishedAt')}`, error: sql`${sql.placeholder('error')}`,
    steps: sql`${sql.placeholder('steps')}`, leaseUntil: null,
  }).where(eq(workflowRuns.id, sql.placeholder('id'))).prepare();
  async function finish(runId: string, status: 'success' | 'failed', error: string | null, steps: RunStep[]) {
    await store.transaction(async (tx) => {
      await tx.prepared(finishRun).execute({ status, finishedAt: nowIso(), error, steps: JSON.stringify(steps), id: runId });
    });
  }

  let active = 0;
  /** A claim loop is running: only one at a time, so two never claim past `concurrency` between them. */
  let pumping = false;
  /** A wake arrived while the claim loop ran: it looks again before it settles. */
  let rewake = false;
  let stopped = false;
  const idleWaiters: Array<() => void> = [];

  /** The workflow as the actor of its steps: editor of the base of its table, so the steps write as the workflow. */
  async function actorOf(w: Workflow): Promise<WorkflowActor> {
    const baseId = await baseOfTable(w.tableId);
    if (!baseId) throw new StepError(`table ${w.tableId} no longer exists`);
    return { kind: 'workflow', id: w.id, baseId, isAdmin: false };
  }

  async function runNode(node: WorkflowNode, run: ClaimedRun, actor: WorkflowActor, scope: TemplateScope): Promise<{ output: unknown; stop?: boolean }> {
    const config = resolveTemplates(node.config, scope) as Record<string, unknown>;
    switch (node.type) {
      case 'condition': {
        if (!run.recordId) throw new StepError('condition needs a triggering record');
        const where = parseFilter(node.config.filter, await fields.loadFields(store, run.tableId));
        const matches = !where || await records.matches(store, run.tableId, where, run.recordId);
        return { output: { matched: matches }, stop: !matches };
      }
      case 'update_record': {
        if (!run.recordId) throw new StepError('update_record needs a triggering record');
        const updated = await records.updateRecord(actor, run.tableId, run.recordId, config.fields, { depth: run.depth + 1 });
        scope.record = { ...updated.fields, id: updated.id };
        return { output: { id: updated.id, fields: updated.fields } };
      }
      case 'create_record': {
        const tableId = String(config.table_id);
        // Checked when the workflow was saved; checked again because a workflow never writes outside its own base.
        if (await baseOfTable(tableId) !== actor.baseId) throw new StepError(`create_record: table ${tableId} is not a table of this workflow's base`);
        const created = await records.createRecord(actor, tableId, config.fields, { depth: run.depth + 1 });
        return { output: { id: created.id, fields: created.fields } };
      }
      case 'http_request': {
        const headers = { ...((config.headers as Record<string, string>) ?? {}) };
        let body: string | undefined;
        if (config.body !== undefined && config.body !== null) {
          body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body);
          if (typeof config.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
        }
        const answer = await opts.fetch({ url: String(config.url), method: String(config.method ?? 'GET').toUpperCase(), headers, body });
        const text = answer.body.toString('utf8');
        let parsed: unknown = text;
        if (/json/i.test(answer.headers['content-type'] ?? '')) {
          try { parsed = JSON.parse(text); } catch { /* keep the text */ }
        }
        const output = { status: answer.status, headers: answer.headers, body: parsed };
        if (answer.status < 200 || answer.status > 299) throw Object.assign(new StepError(`HTTP ${answer.status} from ${answer.url}`), { output });
        return { output };
      }
      case 'run_script': {
        if (!opts.runScript) throw new StepError(`run_script: script plugins are not available (plugin ${config.plugin_id})`);
        return { output: await opts.runScript(String(config.plugin_id), config.params ?? {}, { actor, tableId: run.tableId, recordId: run.recordId }) };
      }
    }
  }

  async function execute(run: ClaimedRun) {
    running.add(run.id);
    try {
      await executeSteps(run);
    } finally {
      running.delete(run.id);
    }
  }

  async function executeSteps(run: ClaimedRun) {
    const steps: RunStep[] = [];
    let status: 'success' | 'failed' = 'success';
    let error: string | null = null;
    try {
      const w = await workflows.loadWorkflow(run.workflowId);
      const actor = await actorOf(w);
      const record = run.recordId ? await records.getRecord(run.tableId, run.recordId).catch(() => null) : null;
      if (run.recordId && !record) throw new StepError(`record ${run.recordId} no longer exists`);
      const scope: TemplateScope = { record: record ? { ...record.fields, id: record.id } : {}, steps: {}, now: nowIso() };
      let stopped = false;
      for (const node of w.nodes) {
        if (stopped || status === 'failed') {
          steps.push({ node_id: node.id, type: node.type, status: 'skipped', started_at: null, finished_at: null, output: null, error: null });
          continue;
        }
        const startedAt = nowIso();
        try {
          const { output, stop } = await runNode(node, run, actor, scope);
          scope.steps[node.id] = output;
          steps.push({ node_id: node.id, type: node.type, status: 'success', started_at: startedAt, finished_at: nowIso(), output, error: null });
          if (stop) stopped = true;
        } catch (e) {
          const message = e instanceof StepError || e instanceof AppError || e instanceof BlockedError || (e as { code?: string }).code
            ? (e as Error).message
            : `internal error: ${(e as Error).message}`;
          steps.push({ node_id: node.id, type: node.type, status: 'failed', started_at: startedAt, finished_at: nowIso(), output: (e as { output?: unknown }).output ?? null, error: message });
          status = 'failed';
          error = `${node.id}: ${message}`;
        }
      }
    } catch (e) {
      status = 'failed';
      error = (e as Error).message;
    }
    await finish(run.id, status, error, steps);
  }

  // Requests come first: while they arrive, runs wait for a short quiet spell, but one starts at least every MAX_WAIT_MS.
  const QUIET_MS = 10;
  const MAX_WAIT_MS = 50;
  /** After a claim failed (the database busy or closing), the queue is looked at again this much later. */
  const RETRY_MS = 1000;
  let lastStart = 0;
  let deferred: NodeJS.Timeout | null = null;
  function busy(): boolean {
    return !!opts.sinceActivity && opts.sinceActivity() < QUIET_MS && Date.now() - lastStart < MAX_WAIT_MS;
  }

  /** Resolves idle() and stop() once no run is in progress and no claim loop is running. */
  function settle() {
    if (active === 0 && !pumping) idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  /**
   * Claims and runs queued runs until none are left, up to `concurrency` at once. Each claim is awaited, so a wake
   * that arrives meanwhile only marks `rewake`: the running loop looks again before it settles.
   */
  async function pump(): Promise<void> {
    if (pumping) {
      rewake = true;
      return;
    }
    if (!stopped && busy()) {
      deferred ??= setTimeout(() => {
        deferred = null;
        void pump();
      }, QUIET_MS);
      return;
    }
    pumping = true;
    rewake = false;
    let failed = false;
    try {
      while (!stopped && active < concurrency) {
        const run = await claim();
        if (!run) break;
        lastStart = Date.now();
        active++;
        execute(run)
          .catch((e) => console.error('workflow run failed to record:', e))
          .finally(() => {
            active--;
            void pump();
          });
        if (busy()) break;
      }
    } catch (e) {
      console.error('workflow runner failed to claim a run:', e);
      failed = true;
    } finally {
      pumping = false;
    }
    if (failed && !stopped) {
      // Queued runs would otherwise wait for the next write: look again in a while.
      deferred ??= setTimeout(() => {
        deferred = null;
        void pump();
      }, RETRY_MS);
    } else if (rewake && !stopped) {
      return pump();
    }
    settle();
  }
  const wake = () => void pump();

  // Upkeep while started: renew the leases of the runs in progress, and look for queued runs nobody woke this process
  // for (those another process queued and then died before running).
  let upkeep: NodeJS.Timeout | null = null;
  async function renewLeases() {
    if (!running.size) return;
    const ids = [...running];
    await store.transaction(async (tx) => {
      await tx.db.update(workflowRuns).set({ leaseUntil: leaseUntil(leaseMs) }).where(and(inArray(workflowRuns.id, ids), eq(workflowRuns.status, 'running')));
    });
  }

  return {
    /** Marks runs interrupted by a crash as failed, then starts on the queue and renews the leases of its runs. */
    async start() {
      await failInterruptedRuns(store, 'workflow_runs');
      if (stopped) return;
      workflows.setWake(wake);
      // Runs queued by another process over the same database: this one may take them too.
      store.onAnnouncement('runs', wake);
      upkeep = setInterval(() => {
        renewLeases().catch((e) => console.error('renewing workflow run leases failed:', e));
        wake();
      }, leaseMs / 3);
      upkeep.unref();
      wake();
    },
    wake,
    /** Runs queued or running, for /metrics. */
    async queueDepth(): Promise<number> {
      return (await first(store.db.select({ n: count() }).from(workflowRuns).where(inArray(workflowRuns.status, ['queued', 'running']))))!.n;
    },
    /** Resolves when no run is in progress and none queued before the call is left unclaimed (tests and shutdown). */
    idle(): Promise<void> {
      const done = new Promise<void>((resolve) => idleWaiters.push(resolve));
      wake(); // runs queued a moment ago may not have been woken yet
      return done;
    },
    async stop() {
      stopped = true;
      if (upkeep) clearInterval(upkeep);
      if (deferred) clearTimeout(deferred);
      deferred = null;
      if (active || pumping) await new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
