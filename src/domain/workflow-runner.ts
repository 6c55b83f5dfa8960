// Executes queued workflow runs off the request path: claims runs from the durable queue, runs their nodes in order
// as the workflow (an editor of its table's base), and records each step. A run left `running` by a crash is marked
// failed at the next start.
import type Database from 'better-sqlite3';
import { AppError } from '../errors.js';
import { BlockedError, type GuardedFetch } from '../net/ssrf-guard.js';
import { nowIso } from '../ids.js';
import type { WorkflowActor } from './deps.js';
import { parseFilter } from './record-query.js';
import type { FieldService } from './fields.js';
import type { RecordService } from './records.js';
import { resolveTemplates, type TemplateScope } from './templates.js';
import type { RunStep, Workflow, WorkflowNode, WorkflowService } from './workflows.js';
import { failInterruptedRuns } from './interrupted-runs.js';

interface ClaimedRun {
  id: string;
  workflow_id: string;
  table_id: string;
  record_id: string | null;
  depth: number;
}

/** Thrown by a node to fail its step with a message. */
class StepError extends Error {}

/** Runs a script plugin for the run_script node as the workflow; absent when the runner is built without the plugin runtime. */
export type ScriptRunner = (pluginId: string, params: unknown, context: { actor: WorkflowActor; tableId: string; recordId: string | null }) => Promise<unknown>;

export function createWorkflowRunner(opts: {
  sqlite: Database.Database;
  workflows: WorkflowService;
  records: RecordService;
  fields: FieldService;
  fetch: GuardedFetch;
  runScript?: ScriptRunner;
  concurrency?: number;
  /** Milliseconds since the last request arrived: runs step aside while the server is answering requests. */
  sinceActivity?: () => number;
}) {
  const { sqlite, workflows, records, fields } = opts;
  const concurrency = opts.concurrency ?? 8;
  const claim = sqlite.prepare(`UPDATE workflow_runs SET status = 'running', started_at = ?
    WHERE rowid = (SELECT rowid FROM workflow_runs WHERE status = 'queued' ORDER BY rowid LIMIT 1)
    RETURNING id, workflow_id, table_id, record_id, depth`);
  const countPending = sqlite.prepare(`SELECT count(*) FROM workflow_runs WHERE status IN ('queued', 'running')`).pluck();
  const finish = sqlite.prepare(`UPDATE workflow_runs SET status = ?, finished_at = ?, error = ?, steps = ? WHERE id = ?`);
  const baseOfTable = sqlite.prepare('SELECT base_id FROM tables WHERE id = ?').pluck();
  let active = 0;
  let stopped = false;
  const idleWaiters: Array<() => void> = [];

  /** The workflow as the actor of its steps: editor of the base of its table, so the steps write as the workflow. */
  function actorOf(w: Workflow): WorkflowActor {
    const baseId = baseOfTable.get(w.tableId) as string | undefined;
    if (!baseId) throw new StepError(`table ${w.tableId} no longer exists`);
    return { kind: 'workflow', id: w.id, baseId, isAdmin: false };
  }

  async function runNode(node: WorkflowNode, run: ClaimedRun, actor: WorkflowActor, scope: TemplateScope): Promise<{ output: unknown; stop?: boolean }> {
    const config = resolveTemplates(node.config, scope) as Record<string, unknown>;
    switch (node.type) {
      case 'condition': {
        if (!run.record_id) throw new StepError('condition needs a triggering record');
        const where = parseFilter(node.config.filter, fields.loadFields(run.table_id));
        const matches = !where || records.matches(run.table_id, where, run.record_id);
        return { output: { matched: matches }, stop: !matches };
      }
      case 'update_record': {
        if (!run.record_id) throw new StepError('update_record needs a triggering record');
        const updated = await records.updateRecord(actor, run.table_id, run.record_id, config.fields, { depth: run.depth + 1 });
        scope.record = { ...updated.fields, id: updated.id };
        return { output: { id: updated.id, fields: updated.fields } };
      }
      case 'create_record': {
        const tableId = String(config.table_id);
        // Checked when the workflow was saved; checked again because a workflow never writes outside its own base.
        if (baseOfTable.get(tableId) !== actor.baseId) throw new StepError(`create_record: table ${tableId} is not a table of this workflow's base`);
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
        return { output: await opts.runScript(String(config.plugin_id), config.params ?? {}, { actor, tableId: run.table_id, recordId: run.record_id }) };
      }
    }
  }

  async function execute(run: ClaimedRun) {
    const steps: RunStep[] = [];
    let status: 'success' | 'failed' = 'success';
    let error: string | null = null;
    try {
      const w = workflows.loadWorkflow(run.workflow_id);
      const actor = actorOf(w);
      const record = run.record_id ? await records.getRecord(run.table_id, run.record_id).catch(() => null) : null;
      if (run.record_id && !record) throw new StepError(`record ${run.record_id} no longer exists`);
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
    finish.run(status, nowIso(), error, JSON.stringify(steps), run.id);
  }

  // Requests come first: while they arrive, runs wait for a short quiet spell, but one starts at least every MAX_WAIT_MS.
  const QUIET_MS = 10;
  const MAX_WAIT_MS = 50;
  let lastStart = 0;
  let deferred: NodeJS.Timeout | null = null;
  function busy(): boolean {
    return !!opts.sinceActivity && opts.sinceActivity() < QUIET_MS && Date.now() - lastStart < MAX_WAIT_MS;
  }

  /** Claims and runs queued runs until none are left, up to `concurrency` at once. */
  function pump() {
    if (busy()) {
      deferred ??= setTimeout(() => {
        deferred = null;
        pump();
      }, QUIET_MS);
      return;
    }
    while (!stopped && active < concurrency) {
      const run = claim.get(nowIso()) as ClaimedRun | undefined;
      if (!run) break;
      lastStart = Date.now();
      active++;
      execute(run)
        .catch((e) => console.error('workflow run failed to record:', e))
        .finally(() => {
          active--;
          pump();
        });
      if (busy()) break;
    }
    if (active === 0) idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  return {
    /** Marks runs interrupted by a crash as failed, then starts on the queue. */
    start() {
      failInterruptedRuns(sqlite, 'workflow_runs');
      workflows.setWake(pump);
      pump();
    },
    wake: pump,
    /** Runs queued or running, for /metrics. */
    queueDepth: () => countPending.get() as number,
    /** Resolves when no run is in progress (tests and shutdown). */
    idle(): Promise<void> {
      pump(); // runs queued a moment ago may not have been woken yet
      return active === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      if (deferred) clearTimeout(deferred);
      if (active) await new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
