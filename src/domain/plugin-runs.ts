// Script plugin runs and custom endpoint calls: each runs the package's Python in the sandbox, its `base` calls
// checked and run as the caller (a user, or the workflow of a run_script step), and every run and call lands in the run log.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { pluginRuns } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { AppError, badRequest } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { runScript, type ScriptOutcome } from '../../plugins-runtime/python/runner.js';
import { atLeast, type Role } from './access.js';
import type { Actor, Deps, WorkflowActor } from './deps.js';
import { pageArgs, type Page } from './pagination.js';
import type { PluginDataGateway, PluginService } from './plugins.js';

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

const denied = (message: string) => new AppError('PERMISSION_DENIED', message);

/** The script API (spec 3, 4.3) onto the data methods of the RPC, with the shapes scripts get back. */
async function scriptCall(
  plugins: PluginService, gateway: PluginDataGateway, pluginId: string, baseId: string, role: Role | null, method: string, args: unknown[],
): Promise<unknown> {
  const { manifest } = plugins.current(pluginId);
  const call = (rpcMethod: string, params: Record<string, unknown>) => plugins.dataCall(gateway, pluginId, manifest, baseId, role, rpcMethod, params);
  const record = (r: any) => ({ id: r.id, values: r.values });
  switch (method) {
    case 'list_tables':
      return ((await call('table.listTables', {})) as any[]).map((t) => ({ id: t.id, name: t.name, description: t.description }));
    case 'get_fields':
      return ((await call('table.getSchema', { tableId: args[0] })) as any).fields.map((f: any) => ({ id: f.id, name: f.name, type: f.type }));
    case 'list_records': {
      const page = (await call('table.getRecords', { tableId: args[0], page: args[1] ?? 1, per_page: args[2] ?? 20 })) as any;
      return { items: page.items.map(record), total: page.total };
    }
    case 'get_record':
      return record(await call('table.getRecord', { recordId: args[0] }));
    case 'create_record':
      return { id: ((await call('record.create', { tableId: args[0], values: args[1] ?? {} })) as any).id };
    case 'update_record':
      return { id: ((await call('record.update', { recordId: args[0], values: args[1] ?? {} })) as any).id };
    case 'delete_record':
      await call('record.delete', { recordId: args[0] });
      return { deleted: true };
    case 'get_config':
      return call('config.get', {});
  }
  throw new AppError('METHOD_NOT_FOUND', `base.${method} does not exist`);
}

export function createPluginRunService(deps: Deps, plugins: PluginService) {
  const { sqlite, orm } = deps;

  function toEntry(r: typeof pluginRuns.$inferSelect): RunLogEntry {
    return { ...r, runId: r.id, endpoint: r.endpoint ?? null, logs: r.logs ?? [] } as RunLogEntry;
  }

  /** Runs one script (a run or an endpoint call) and records it from start to end. */
  async function execute(opts: {
    actor: Actor; gateway: PluginDataGateway; pluginId: string; baseId: string; role: Role | null; kind: 'run' | 'call';
    endpoint: string | null; entry: string; timeoutS: number; context: Record<string, unknown>; request: Record<string, unknown> | null;
  }): Promise<{ runId: string; outcome: ScriptOutcome }> {
    const { row } = plugins.current(opts.pluginId);
    const runId = newId('run');
    const startedAt = nowIso();
    writeTransaction(sqlite, () => {
      orm.insert(pluginRuns).values({
        id: runId, pluginId: opts.pluginId, version: row.currentVersion, kind: opts.kind, endpoint: opts.endpoint, baseId: opts.baseId,
        userId: opts.actor.id, status: 'running', startedAt, logs: [],
      }).run();
    });
    const files = new Map(plugins.filesOf(opts.pluginId, row.currentVersion).map((p) => [p, plugins.file(opts.pluginId, row.currentVersion, p)!]));
    const outcome = await runScript({
      files,
      entry: opts.entry,
      timeoutMs: opts.timeoutS * 1000,
      context: opts.context,
      config: plugins.effectiveConfig(opts.pluginId, opts.baseId),
      request: opts.request,
      call: (method, args) => scriptCall(plugins, opts.gateway, opts.pluginId, opts.baseId, opts.role, method, args),
    });
    writeTransaction(sqlite, () => {
      orm.update(pluginRuns).set({
        status: outcome.status, finishedAt: nowIso(), durationMs: Math.round(outcome.durationMs), result: outcome.result ?? null,
        error: outcome.error, traceback: outcome.traceback, logs: outcome.logs,
      }).where(eq(pluginRuns.id, runId)).run();
    });
    plugins.recordOutcome(opts.pluginId, outcome.status === 'failed');
    return { runId, outcome };
  }

  return {
    /** POST /{id}/run: a script plugin, for an editor or higher of the base; waits for the end of the run. */
    async runPlugin(actor: Actor, gateway: PluginDataGateway, id: string, req: { baseId?: unknown; tableId?: unknown; params?: unknown }) {
      const { row, manifest } = plugins.assertEnabled(id);
      if (typeof req.baseId !== 'string' || !req.baseId) throw badRequest('base_id is required', [{ field: 'base_id', message: 'required' }]);
      const role = plugins.roleIn(actor, req.baseId);
      if (!atLeast(role, 'editor')) throw denied(`Running a script plugin needs the editor role in base ${req.baseId}`);
      if (row.type !== 'script') throw badRequest(`Plugin ${id} is a ui plugin; only script plugins run`);
      // A wrong table is the caller's mistake, not a failed run of the plugin.
      if (req.tableId !== undefined && req.tableId !== null) plugins.tableInBase(req.baseId, req.tableId);
      if (req.params !== undefined && req.params !== null && (typeof req.params !== 'object' || Array.isArray(req.params))) throw badRequest('params must be an object', [{ field: 'params', message: 'must be an object' }]);
      const context = { plugin_id: id, base_id: req.baseId, table_id: (req.tableId as string | undefined) ?? null, params: req.params ?? {} };
      const { runId, outcome } = await execute({
        actor, gateway, pluginId: id, baseId: req.baseId, role, kind: 'run', endpoint: null, entry: manifest.entry,
        timeoutS: manifest.script?.timeout ?? DEFAULT_TIMEOUT_S, context, request: null,
      });
      return { runId, status: outcome.status, result: outcome.result ?? null, error: outcome.error, logs: outcome.logs };
    },

    /** POST /{id}/call/{endpoint}: a declared endpoint of a ui or script plugin, for any member of the base. */
    async callEndpoint(actor: Actor, gateway: PluginDataGateway, id: string, endpoint: string, req: { baseId?: unknown; payload?: unknown }) {
      const { manifest } = plugins.assertEnabled(id);
      const decl = (manifest.endpoints ?? []).find((e) => e.name === endpoint);
      if (!decl) throw new AppError('ENDPOINT_NOT_DECLARED', `Plugin ${id} declares no endpoint "${endpoint}"`);
      if (typeof req.baseId !== 'string' || !req.baseId) throw badRequest('base_id is required', [{ field: 'base_id', message: 'required' }]);
      const role = plugins.roleIn(actor, req.baseId);
      if (!atLeast(role, 'viewer')) throw denied(`You are not a member of base ${req.baseId}`);
      if (!plugins.usableInBase(id, manifest, req.baseId)) throw denied(`Plugin ${id} is not installed and enabled in base ${req.baseId}`);
      const { outcome } = await execute({
        actor, gateway, pluginId: id, baseId: req.baseId, role, kind: 'call', endpoint, entry: decl.entry,
        timeoutS: decl.timeout ?? DEFAULT_TIMEOUT_S, context: { plugin_id: id, base_id: req.baseId, table_id: null, params: {} },
        request: { endpoint, payload: req.payload ?? null, user_id: actor.id },
      });
      if (outcome.timedOut) throw new AppError('TIMEOUT', outcome.error ?? `Endpoint ${endpoint} timed out`);
      if (outcome.status === 'failed') throw new AppError('ENDPOINT_FAILED', outcome.error ?? `Endpoint ${endpoint} failed`);
      return { result: outcome.result ?? null };
    },

    /**
     * Runs a script plugin for a workflow step in the base of the workflow's table, as the workflow: its role there
     * (editor) gates the script's methods, and `gateway` must run its data calls with the same actor.
     */
    async runForWorkflow(gateway: PluginDataGateway, actor: WorkflowActor, id: string, tableId: string, recordId: string | null, params: unknown) {
      const { row, manifest } = plugins.assertEnabled(id);
      if (row.type !== 'script') throw badRequest(`Plugin ${id} is a ui plugin; run_script needs a script plugin`);
      const baseId = actor.baseId;
      const role = plugins.roleIn(actor, baseId);
      if (!atLeast(role, 'editor')) throw denied(`Workflow ${actor.id} may not run scripts in base ${baseId}`);
      const context = { plugin_id: id, base_id: baseId, table_id: tableId, record_id: recordId, params: params ?? {} };
      const { runId, outcome } = await execute({
        actor, gateway, pluginId: id, baseId, role, kind: 'run', endpoint: null, entry: manifest.entry,
        timeoutS: manifest.script?.timeout ?? DEFAULT_TIMEOUT_S, context, request: null,
      });
      if (outcome.status === 'failed') throw new AppError('ENDPOINT_FAILED', `script ${id} failed: ${outcome.error}`);
      return { run_id: runId, result: outcome.result ?? null, logs: outcome.logs };
    },

    /** Run log, newest first; one base, or every base for a system administrator. */
    async listRunLogs(id: string, baseId: string | null, page?: number | null, pageSize?: number | null): Promise<Page<RunLogEntry>> {
      plugins.current(id);
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 200 });
      const where = baseId ? and(eq(pluginRuns.pluginId, id), eq(pluginRuns.baseId, baseId)) : eq(pluginRuns.pluginId, id);
      const items = orm.select().from(pluginRuns).where(where).orderBy(desc(sql`rowid`)).limit(p.pageSize).offset(p.offset).all().map(toEntry);
      const total = orm.select({ n: count() }).from(pluginRuns).where(where).get()!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    /** At start: calls cut off by a restart are marked failed, never left running. */
    failInterrupted() {
      sqlite.prepare(`UPDATE plugin_runs SET status = 'failed', finished_at = ?, error = 'interrupted: the server stopped during the run' WHERE status = 'running'`).run(nowIso());
    },
  };
}

export type PluginRunService = ReturnType<typeof createPluginRunService>;
