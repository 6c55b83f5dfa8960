// Script plugin runs and endpoint calls: the package's Python in the sandbox, its base.* calls guarded, each run logged.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { pluginRuns } from '../../db/schema.js';
import { first, type UnitOfWork } from '../../db/store.js';
import { AppError, badRequest } from '../../errors.js';
import { newId, nowIso } from '../../ids.js';
import { isObject } from '../../checks.js';
import { runScript, type ScriptOutcome } from '../../../plugins-runtime/python/runner.js';
import type { Actor, Deps, WorkflowActor } from '../deps.js';
import { pageArgs, type Page } from '../pagination.js';
import type { Catalog } from './catalog.js';
import type { DataCallGuard, DataCalls, PluginDataGateway } from './rpc.js';
import { failInterruptedRuns, leaseUntil } from '../interrupted-runs.js';

export const DEFAULT_TIMEOUT_S = 30;

export interface RunLogEntry {
  runId: string;
  pluginId: string;
  version: string;
  kind: 'run' | 'call';
  endpoint: string | null;
  baseId: string;
  /**
   * Who ran it: a user's id, or for a run_script workflow step the workflow's id (`wfl_…`), the same id its
   * record writes carry as creator or last editor. The column predates workflow actors and is never null.
   */
  userId: string;
  status: 'running' | 'completed' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  result: unknown;
  error: string | null;
  traceback: string | null;
  logs: string[];
}

export interface RunAnswer {
  runId: string;
  status: 'completed' | 'failed';
  result: unknown;
  error: string | null;
  logs: string[];
}

/** Who a script runs for: the actor its writes and run log name, its data calls' door, and the schema's guard of each call. */
export interface ScriptCaller {
  actor: Actor;
  gateway: PluginDataGateway;
  guard: DataCallGuard;
}

/** What runs need of the rest of the plugin service. */
export interface RunParts {
  catalog: Catalog;
  calls: DataCalls;
  effectiveConfig: (id: string, baseId: string) => Promise<Record<string, unknown>>;
  /** Counts a run's outcome in the caller's unit of work (the transaction that records the run's end). */
  countOutcome: (uow: UnitOfWork, id: string, failed: boolean) => Promise<void>;
}

// The shapes the gateway answers with (schema/plugin-gateway.ts), as far as the script API reads them.
interface Named { id: string; name: string; description?: string; type?: string }
interface RecordShape { id: string; values: unknown }

/** The script API (spec 3, 4.3) onto the data methods of the RPC, with the shapes scripts get back; each call guarded first. */
async function scriptCall(parts: RunParts, caller: ScriptCaller, pluginId: string, baseId: string, method: string, args: unknown[]): Promise<unknown> {
  const call = async (rpcMethod: string, params: Record<string, unknown>) => {
    await caller.guard(rpcMethod);
    return parts.calls.dataCall(caller.gateway, pluginId, baseId, rpcMethod, params);
  };
  const record = (r: RecordShape) => ({ id: r.id, values: r.values });
  switch (method) {
    case 'list_tables':
      return ((await call('table.listTables', {})) as Named[]).map((t) => ({ id: t.id, name: t.name, description: t.description }));
    case 'get_fields':
      return ((await call('table.getSchema', { tableId: args[0] })) as { fields: Named[] }).fields.map((f) => ({ id: f.id, name: f.name, type: f.type }));
    case 'list_records': {
      const page = (await call('table.getRecords', { tableId: args[0], page: args[1] ?? 1, per_page: args[2] ?? 20 })) as { items: RecordShape[]; total: number };
      return { items: page.items.map(record), total: page.total };
    }
    case 'get_record':
      return record((await call('table.getRecord', { recordId: args[0] })) as RecordShape);
    case 'create_record':
      return { id: ((await call('record.create', { tableId: args[0], values: args[1] ?? {} })) as RecordShape).id };
    case 'update_record':
      return { id: ((await call('record.update', { recordId: args[0], values: args[1] ?? {} })) as RecordShape).id };
    case 'delete_record':
      await call('record.delete', { recordId: args[0] });
      return { deleted: true };
    case 'get_config':
      return call('config.get', {});
  }
  throw new AppError('METHOD_NOT_FOUND', `base.${method} does not exist`);
}

// A script's data calls run as its caller (a user, or the workflow of a run_script step), each guarded by the schema's check.
export function createRuns(deps: Deps, parts: RunParts) {
  const { store } = deps;
  const { pluginRuns } = store.schema;
  const { catalog } = parts;

  function toEntry(r: typeof pluginRuns.$inferSelect): RunLogEntry {
    return { ...r, runId: r.id, endpoint: r.endpoint ?? null, logs: r.logs ?? [] } as RunLogEntry;
  }

  /**
   * Runs one script (a run or an endpoint call) and records it from start to end: its start in one transaction, its end
   * and the plugin's failure count in another, and the script itself in neither (it may run for its whole timeout).
   */
  async function execute(caller: ScriptCaller, opts: {
    pluginId: string; baseId: string; kind: 'run' | 'call'; endpoint: string | null; entry: string; timeoutS: number;
    context: Record<string, unknown>; request: Record<string, unknown> | null;
  }): Promise<{ runId: string; outcome: ScriptOutcome }> {
    const { row } = await catalog.current(store, opts.pluginId);
    const runId = newId('run');
    const startedAt = nowIso();
    await store.transaction(async (tx) => {
      await tx.db.insert(pluginRuns).values({
        id: runId, pluginId: opts.pluginId, version: row.currentVersion, kind: opts.kind, endpoint: opts.endpoint, baseId: opts.baseId,
        userId: caller.actor.id, status: 'running', startedAt, logs: [],
        // Held for the script's whole timeout and a minute more; a process that dies leaves it to lapse (interrupted-runs.ts).
        leaseUntil: leaseUntil(opts.timeoutS * 1000 + 60_000),
      });
    });
    const files = await catalog.filesWithContent(opts.pluginId, row.currentVersion);
    const config = await parts.effectiveConfig(opts.pluginId, opts.baseId);
    const outcome = await runScript({
      files,
      entry: opts.entry,
      timeoutMs: opts.timeoutS * 1000,
      context: opts.context,
      config,
      request: opts.request,
      call: (method, args) => scriptCall(parts, caller, opts.pluginId, opts.baseId, method, args),
    });
    await store.transaction(async (tx) => {
      await tx.db.update(pluginRuns).set({
        status: outcome.status, finishedAt: nowIso(), durationMs: Math.round(outcome.durationMs), result: outcome.result ?? null,
        error: outcome.error, traceback: outcome.traceback, logs: outcome.logs,
      }).where(eq(pluginRuns.id, runId));
      await parts.countOutcome(tx, opts.pluginId, outcome.status === 'failed');
    });
    return { runId, outcome };
  }

  return {
    /** POST /{id}/run: a script plugin (the scopes have checked the plugin and the editor role); waits for the end of the run. */
    async runPlugin(caller: ScriptCaller, id: string, req: { baseId: string; tableId?: string | null; params?: unknown }): Promise<RunAnswer> {
      const { row, manifest } = await catalog.current(store, id);
      if (row.type !== 'script') throw badRequest(`Plugin ${id} is a ui plugin; only script plugins run`);
      // A wrong table is the caller's mistake, not a failed run of the plugin.
      if (req.tableId !== undefined && req.tableId !== null) await parts.calls.tableInBase(req.baseId, req.tableId);
      if (req.params !== undefined && req.params !== null && !isObject(req.params)) throw badRequest('params must be an object', [{ field: 'params', message: 'must be an object' }]);
      const context = { plugin_id: id, base_id: req.baseId, table_id: req.tableId ?? null, params: req.params ?? {} };
      const { runId, outcome } = await execute(caller, {
        pluginId: id, baseId: req.baseId, kind: 'run', endpoint: null, entry: manifest.entry,
        timeoutS: manifest.script?.timeout ?? DEFAULT_TIMEOUT_S, context, request: null,
      });
      return { runId, status: outcome.status, result: outcome.result ?? null, error: outcome.error, logs: outcome.logs };
    },

    /** POST /{id}/call/{endpoint}: a declared endpoint of a ui or script plugin (the scopes have checked plugin, endpoint and member). */
    async callEndpoint(caller: ScriptCaller, id: string, endpoint: string, req: { baseId: string; payload?: unknown }): Promise<{ result: unknown }> {
      const { manifest } = await catalog.current(store, id);
      const decl = (manifest.endpoints ?? []).find((e) => e.name === endpoint);
      if (!decl) throw new AppError('ENDPOINT_NOT_DECLARED', `Plugin ${id} declares no endpoint "${endpoint}"`);
      const { outcome } = await execute(caller, {
        pluginId: id, baseId: req.baseId, kind: 'call', endpoint, entry: decl.entry,
        timeoutS: decl.timeout ?? DEFAULT_TIMEOUT_S, context: { plugin_id: id, base_id: req.baseId, table_id: null, params: {} },
        request: { endpoint, payload: req.payload ?? null, user_id: caller.actor.id },
      });
      if (outcome.timedOut) throw new AppError('TIMEOUT', outcome.error ?? `Endpoint ${endpoint} timed out`);
      if (outcome.status === 'failed') throw new AppError('ENDPOINT_FAILED', outcome.error ?? `Endpoint ${endpoint} failed`);
      return { result: outcome.result ?? null };
    },

    /**
     * Runs a script plugin for a workflow step in the base of the workflow's table, as the workflow (the schema has
     * checked the plugin and the workflow's role there); `caller.gateway` runs its data calls with the same actor.
     */
    async runForWorkflow(caller: ScriptCaller & { actor: WorkflowActor }, id: string, tableId: string, recordId: string | null, params: unknown) {
      const { row, manifest } = await catalog.current(store, id);
      if (row.type !== 'script') throw badRequest(`Plugin ${id} is a ui plugin; run_script needs a script plugin`);
      const baseId = caller.actor.baseId;
      const context = { plugin_id: id, base_id: baseId, table_id: tableId, record_id: recordId, params: params ?? {} };
      const { runId, outcome } = await execute(caller, {
        pluginId: id, baseId, kind: 'run', endpoint: null, entry: manifest.entry,
        timeoutS: manifest.script?.timeout ?? DEFAULT_TIMEOUT_S, context, request: null,
      });
      if (outcome.status === 'failed') throw new AppError('ENDPOINT_FAILED', `script ${id} failed: ${outcome.error}`);
      return { run_id: runId, result: outcome.result ?? null, logs: outcome.logs };
    },

    /** Run log, newest first; one base, or every base for a system administrator. */
    async listRunLogs(id: string, baseId: string | null, page?: number | null, pageSize?: number | null): Promise<Page<RunLogEntry>> {
      await catalog.row(store, id);
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 200 });
      const where = baseId ? and(eq(pluginRuns.pluginId, id), eq(pluginRuns.baseId, baseId)) : eq(pluginRuns.pluginId, id);
      const items = (await store.db.select().from(pluginRuns).where(where).orderBy(desc(store.insertionOrder)).limit(p.pageSize).offset(p.offset)).map(toEntry);
      const total = (await first(store.db.select({ n: count() }).from(pluginRuns).where(where)))!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    /** At start: calls cut off by a restart are marked failed, never left running. */
    async failInterrupted(): Promise<void> {
      await failInterruptedRuns(deps.store, 'plugin_runs');
    },
  };
}

export type PluginRunService = ReturnType<typeof createRuns>;
