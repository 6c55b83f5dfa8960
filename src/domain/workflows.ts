// Workflow definitions (contract section 5): validation when saved, triggers fired inside record writes, manual runs and logs.
import { asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { coalesced, first, type Db, type Schema, type UnitOfWork } from '../db/store.js';
import { AppError, conflict, invalidField, notFound } from '../errors.js';
import { ValueError, type FieldDef } from '../fields/field-type.js';
import { fieldType } from '../fields/registry.js';
import { newId, nowIso } from '../ids.js';
import type { BaseService } from './bases.js';
import type { Actor, Deps } from './deps.js';
import type { FieldService } from './fields.js';
import { pageArgs, type Page } from './pagination.js';
import { fieldResolver, parseFilter } from './record-query.js';
import type { RecordChange, RecordService } from './records.js';
import { templateExpressions } from './templates.js';
import { isObject } from '../checks.js';

export const TRIGGER_TYPES = ['record_created', 'record_updated', 'manual'] as const;
export const NODE_TYPES = ['condition', 'update_record', 'create_record', 'http_request', 'run_script'] as const;
export const MAX_CHAIN_DEPTH = 5;
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

export interface WorkflowNode { id: string; type: (typeof NODE_TYPES)[number]; config: Record<string, unknown> }
export interface Workflow {
  id: string;
  name: string;
  tableId: string;
  enabled: boolean;
  trigger: { type: (typeof TRIGGER_TYPES)[number]; config: Record<string, unknown> };
  nodes: WorkflowNode[];
  createdAt: string;
  updatedAt: string;
}
export interface RunStep {
  node_id: string; type: string; status: 'success' | 'failed' | 'skipped'; started_at: string | null; finished_at: string | null; output: unknown; error: string | null;
}
export interface RunEntry {
  runId: string;
  workflowId: string;
  status: 'queued' | 'running' | 'success' | 'failed';
  trigger: { type: string; recordId: string | null };
  depth: number;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
  steps: RunStep[];
}
export interface WorkflowInput { name?: unknown; tableId?: unknown; enabled?: unknown; trigger?: unknown; nodes?: unknown }

/** A row of the run log, as the store returns it. */
type RunRow = Schema['workflowRuns']['$inferSelect'];

export function toRunEntry(row: RunRow): RunEntry {
  return {
    runId: row.id, workflowId: row.workflowId, status: row.status, trigger: { type: row.triggerType, recordId: row.recordId },
    depth: row.depth, queuedAt: row.queuedAt, startedAt: row.startedAt, finishedAt: row.finishedAt, error: row.error, steps: row.steps as RunStep[],
  };
}

export function createWorkflowService(deps: Deps, bases: BaseService, fieldService: FieldService, records: RecordService) {
  const { store } = deps;
  const { plugins, tables: tablesTable, workflowRuns, workflows } = store.schema;
  /**
   * Enabled workflows by table, so a record write costs no query when its table has none. Replaced once a change to
   * the workflows has committed; null until first loaded.
   */
  let enabledByTable: Map<string, Workflow[]> | null = null;
  let wake: () => void = () => {};

  async function loadEnabled(uow: UnitOfWork): Promise<Map<string, Workflow[]>> {
    const next = new Map<string, Workflow[]>();
    for (const w of (await uow.db.select().from(workflows).where(eq(workflows.enabled, true))) as Workflow[]) {
      next.set(w.tableId, [...(next.get(w.tableId) ?? []), w]);
    }
    return next;
  }
  /** Reloads the enabled workflows inside a transaction that changed them; they replace the map once it commits. */
  async function refresh(tx: UnitOfWork) {
    const next = await loadEnabled(tx);
    tx.afterCommit(() => {
      enabledByTable = next;
    });
    tx.announce('workflows');
  }
  // Another process changed the workflows: load the enabled ones again.
  store.onAnnouncement('workflows', coalesced('workflows', async () => {
    enabledByTable = await loadEnabled(store);
  }));
  /** The enabled workflows; loaded through `uow` the first time, kept once committed (a map set meanwhile wins). */
  async function enabled(uow: UnitOfWork): Promise<Map<string, Workflow[]>> {
    if (enabledByTable) return enabledByTable;
    const loaded = await loadEnabled(uow);
    uow.afterCommit(() => {
      enabledByTable ??= loaded;
    });
    return loaded;
  }
  // Loaded at once so the first write finds it; should this fail, the first write loads it instead.
  enabled(store).catch(() => {});

  // Prepared once: every run loads its workflow (outside transactions; inside one, read through the transaction).
  const byId = store.db.select().from(workflows).where(eq(workflows.id, sql.placeholder('id'))).prepare();
  async function load(uow: UnitOfWork, id: string): Promise<Workflow> {
    const row = uow.inTransaction
      ? await first(uow.db.select().from(workflows).where(eq(workflows.id, id)).limit(1))
      : (await byId.execute({ id }))[0];
    if (!row) throw notFound(`Workflow ${id} not found`);
    return row as Workflow;
  }

  /** Checks a template against what it may name: fields of the workflow's table, earlier nodes, now. */
  function checkTemplates(value: unknown, where: string, fields: FieldDef[], earlierNodes: Set<string>) {
    const byName = new Set(fields.map((f) => f.name));
    for (const expr of templateExpressions(value)) {
      if (expr === 'now' || expr === 'record.id') continue;
      if (expr.startsWith('record.')) {
        const name = expr.slice('record.'.length);
        if (!byName.has(name)) throw invalidField(where, `template {{${expr}}} names an unknown field "${name}"`);
        continue;
      }
      if (expr.startsWith('steps.')) {
        const nodeId = expr.split('.')[1];
        if (!earlierNodes.has(nodeId)) throw invalidField(where, `template {{${expr}}} names no earlier node "${nodeId}"`);
        continue;
      }
      throw invalidField(where, `unknown template {{${expr}}}; use record.<field>, record.id, steps.<node id>.<path> or now`);
    }
  }

  /** Checks literal values against the target fields; template values are checked when the run resolves them. */
  async function checkFieldValues(uow: UnitOfWork, values: unknown, where: string, targetFields: FieldDef[], templateFields: FieldDef[], earlier: Set<string>, baseId: string) {
    if (!isObject(values) || Object.keys(values).length === 0) throw invalidField(where, 'must be a non-empty object of field values');
    const resolve = fieldResolver(targetFields);
    const ctx = await fieldService.memberContext(uow, baseId);
    for (const [key, value] of Object.entries(values)) {
      const field = resolve(key);
      if (!field) throw invalidField(where, `unknown field "${key}"`);
      if (fieldType(field.type).readOnly) throw invalidField(where, `field "${field.name}" is read-only`);
      if (templateExpressions(value).length) {
        checkTemplates(value, where, templateFields, earlier);
        continue;
      }
      if (value === null) continue;
      try {
        fieldType(field.type).toStored(value, field, ctx);
      } catch (e) {
        if (e instanceof ValueError) throw invalidField(where, `field "${field.name}": ${e.message}`);
        throw e;
      }
    }
  }

  function checkFilter(filter: unknown, where: string, fields: FieldDef[]) {
    try {
      parseFilter(filter, fields);
    } catch (e) {
      if (e instanceof AppError) throw invalidField(where, e.message);
      throw e;
    }
  }

  /** Validates a whole definition, inside the transaction that saves it; every problem is a 400 naming where it is. */
  async function validate(tx: UnitOfWork, tableId: string, name: unknown, trigger: unknown, nodes: unknown) {
    const table = await first(tx.db.select().from(tablesTable).where(eq(tablesTable.id, tableId)).limit(1));
    if (!table) throw invalidField('table_id', `table ${tableId} does not exist`);
    const fields = await fieldService.loadFields(tx, tableId);
    if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw invalidField('name', 'must be 1 to 255 characters');

    if (!isObject(trigger)) throw invalidField('trigger', 'must be an object with "type" and "config"');
    if (!(TRIGGER_TYPES as readonly unknown[]).includes(trigger.type)) throw invalidField('trigger.type', `must be one of ${TRIGGER_TYPES.join(', ')}`);
    const tconfig = trigger.config ?? {};
    if (!isObject(tconfig)) throw invalidField('trigger.config', 'must be an object');
    for (const key of Object.keys(tconfig)) {
      const allowed = trigger.type === 'record_updated' ? ['fields', 'condition'] : ['condition'];
      if (!allowed.includes(key)) throw invalidField('trigger.config', `unknown key "${key}" for ${trigger.type}`);
    }
    if (tconfig.fields !== undefined) {
      if (!Array.isArray(tconfig.fields) || tconfig.fields.length === 0) throw invalidField('trigger.config.fields', 'must be a non-empty array of field names or ids');
      const resolve = fieldResolver(fields);
      for (const f of tconfig.fields) if (!resolve(f)) throw invalidField('trigger.config.fields', `unknown field ${JSON.stringify(f)}`);
    }
    if (tconfig.condition !== undefined) checkFilter(tconfig.condition, 'trigger.config.condition', fields);

    if (!Array.isArray(nodes)) throw invalidField('nodes', 'must be an array');
    if (nodes.length > 50) throw invalidField('nodes', 'at most 50 nodes');
    const seen = new Set<string>();
    const normalized: WorkflowNode[] = [];
    for (const [i, node] of nodes.entries()) {
      const where = `nodes[${i}]`;
      if (!isObject(node)) throw invalidField(where, 'must be an object with "type" and "config"');
      const id = node.id === undefined ? `n${i + 1}` : node.id;
      if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw invalidField(`${where}.id`, 'must be 1 to 64 letters, digits, _ or -');
      if (seen.has(id)) throw invalidField(`${where}.id`, `"${id}" is used twice`);
      if (!(NODE_TYPES as readonly unknown[]).includes(node.type)) throw invalidField(`${where}.type`, `must be one of ${NODE_TYPES.join(', ')}`);
      const config = node.config ?? {};
      if (!isObject(config)) throw invalidField(`${where}.config`, 'must be an object');
      const type = node.type as WorkflowNode['type'];
      switch (type) {
        case 'condition':
          if (config.filter === undefined) throw invalidField(`${where}.config.filter`, 'is required');
          checkFilter(config.filter, `${where}.config.filter`, fields);
          break;
        case 'update_record':
          await checkFieldValues(tx, config.fields, `${where}.config.fields`, fields, fields, seen, table.baseId);
          break;
        case 'create_record': {
          if (typeof config.table_id !== 'string') throw invalidField(`${where}.config.table_id`, 'is required');
          const target = await first(tx.db.select().from(tablesTable).where(eq(tablesTable.id, config.table_id)).limit(1));
          if (!target || target.baseId !== table.baseId) throw invalidField(`${where}.config.table_id`, `table ${config.table_id} is not a table of this base`);
          await checkFieldValues(tx, config.fields, `${where}.config.fields`, await fieldService.loadFields(tx, target.id), fields, seen, table.baseId);
          break;
        }
        case 'http_request': {
          if (typeof config.url !== 'string' || !config.url) throw invalidField(`${where}.config.url`, 'is required');
          if (!templateExpressions(config.url).length) {
            let ok = false;
            try {
              ok = ['http:', 'https:'].includes(new URL(config.url).protocol);
            } catch { /* not a URL */ }
            if (!ok) throw invalidField(`${where}.config.url`, 'must be an http(s) URL');
          }
          const method = config.method ?? 'GET';
          if (typeof method !== 'string' || !HTTP_METHODS.includes(method.toUpperCase())) throw invalidField(`${where}.config.method`, `must be one of ${HTTP_METHODS.join(', ')}`);
          if (config.headers !== undefined && (!isObject(config.headers) || Object.values(config.headers).some((v) => typeof v !== 'string'))) {
            throw invalidField(`${where}.config.headers`, 'must be an object of strings');
          }
          checkTemplates([config.url, config.headers, config.body], `${where}.config`, fields, seen);
          break;
        }
        case 'run_script':
          if (typeof config.plugin_id !== 'string' || !config.plugin_id) throw invalidField(`${where}.config.plugin_id`, 'is required');
          {
            const plugin = await first(tx.db.select({ type: plugins.type }).from(plugins).where(eq(plugins.id, config.plugin_id)).limit(1));
            if (!plugin) throw invalidField(`${where}.config.plugin_id`, `plugin ${config.plugin_id} is not installed`);
            if (plugin.type !== 'script') throw invalidField(`${where}.config.plugin_id`, `plugin ${config.plugin_id} is a ui plugin; run_script needs a script plugin`);
          }
          if (config.params !== undefined && !isObject(config.params)) throw invalidField(`${where}.config.params`, 'must be an object');
          checkTemplates(config.params, `${where}.config.params`, fields, seen);
          break;
      }
      seen.add(id);
      normalized.push({ id, type, config });
    }
    return { name: name.trim(), trigger: { type: trigger.type as Workflow['trigger']['type'], config: tconfig }, nodes: normalized };
  }

  /** Queues runs (one per record) in the caller's transaction; past the chain depth they are recorded as failed with loop_limit. */
  // One prepared insert per connection, run once per queued run: a batch of 1,000 writes queues 1,000 runs.
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const insertRun = (db: Db) => db.insert(workflowRuns).values({ id: p('id'), workflowId: p('workflowId'), tableId: p('tableId'), recordId: p('recordId'),
    triggerType: p('triggerType'), depth: p('depth'), queuedAt: p('queuedAt'), status: p('status'), finishedAt: p('finishedAt'), error: p('error'), steps: sql`'[]'` }).prepare();
  async function enqueue(tx: UnitOfWork, w: Workflow, recordIds: string[], triggerType: string, depth: number): Promise<string[]> {
    const now = nowIso();
    const outcome = depth > MAX_CHAIN_DEPTH
      ? { status: 'failed' as const, finishedAt: now, error: `loop_limit: workflow-caused changes chained deeper than ${MAX_CHAIN_DEPTH}` }
      : { status: 'queued' as const };
    const ended = outcome.status === 'failed' ? outcome : { finishedAt: null, error: null }, ids = recordIds.map(() => newId('run'));
    const run = { workflowId: w.id, tableId: w.tableId, triggerType, depth, queuedAt: now, status: outcome.status, finishedAt: ended.finishedAt, error: ended.error };
    for (const [i, recordId] of recordIds.entries()) await tx.prepared(insertRun).execute({ ...run, id: ids[i], recordId });
    return ids;
  }

  /** A watched field really changed: compares values before and after by their JSON form. */
  function watchedChanged(w: Workflow, change: RecordChange, recordId: string, after: Record<string, unknown>): boolean {
    const before = change.before?.get(recordId)?.fields;
    if (!before) return true;
    const resolve = fieldResolver(change.fields);
    const watched = Array.isArray(w.trigger.config.fields)
      ? (w.trigger.config.fields as string[]).map((f) => resolve(f)).filter((f): f is FieldDef => !!f)
      : change.fields.filter((f) => !fieldType(f.type).readOnly || fieldType(f.type).computed);
    return watched.some((f) => JSON.stringify(before[f.name] ?? null) !== JSON.stringify(after[f.name] ?? null));
  }

  /** Runs were queued in `tx`: this process's runner looks once it has committed, and the other processes are told. */
  function runsQueued(tx: UnitOfWork) {
    tx.afterCommit(() => wake());
    tx.announce('runs');
  }

  records.onChange({
    // Until the enabled workflows are loaded, every update keeps the records as they were (cheap, and never wrong).
    wantsBefore: (tableId) => !enabledByTable || (enabledByTable.get(tableId) ?? []).some((w) => w.trigger.type === 'record_updated'),
    async changed(tx, change) {
      const candidates = ((await enabled(tx)).get(change.tableId) ?? []).filter((w) =>
        change.kind === 'created' ? w.trigger.type === 'record_created' : w.trigger.type === 'record_updated');
      if (!candidates.length) return;
      let queued = 0;
      for (const w of candidates) {
        let recs = change.after;
        if (change.kind === 'updated') recs = recs.filter((r) => watchedChanged(w, change, r.id, r.fields));
        if (!recs.length) continue;
        // The condition is checked against the record after the change, with the same SQL as list filters.
        if (w.trigger.config.condition !== undefined) {
          const where = parseFilter(w.trigger.config.condition, change.fields);
          if (where) {
            const matching = await tx.records.matching(change.tableId, where, recs.map((r) => r.id));
            recs = recs.filter((r) => matching.has(r.id));
          }
        }
        await enqueue(tx, w, recs.map((r) => r.id), w.trigger.type, change.depth);
        queued += recs.length;
      }
      if (queued) runsQueued(tx);
    },
  });

  return {
    /** The runner registers how to be woken when runs are queued. */
    setWake(fn: () => void) {
      wake = fn;
    },
    /** A workflow by id (reads outside transactions): the runner loads it for every run. */
    loadWorkflow: (id: string): Promise<Workflow> => load(store, id),

    async listWorkflows(actor: Actor, tableId: string | null | undefined, page?: number | null, pageSize?: number | null): Promise<Page<Workflow>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      let where;
      if (tableId) where = eq(workflows.tableId, tableId);
      else {
        const ids = await bases.readableBaseIds(actor);
        if (ids !== 'all') {
          const tableIds = ids.length ? (await store.db.select({ id: tablesTable.id }).from(tablesTable).where(inArray(tablesTable.baseId, ids))).map((t) => t.id) : [];
          where = inArray(workflows.tableId, tableIds);
        }
      }
      const items = (await store.db.select().from(workflows).where(where).orderBy(asc(workflows.createdAt), asc(workflows.id)).limit(p.pageSize).offset(p.offset)) as Workflow[];
      const total = (await first(store.db.select({ n: count() }).from(workflows).where(where)))!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    async getWorkflow(id: string): Promise<Workflow> {
      return load(store, id);
    },

    async createWorkflow(input: WorkflowInput): Promise<Workflow> {
      if (typeof input.tableId !== 'string' || !input.tableId) throw invalidField('table_id', 'is required');
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean') throw invalidField('enabled', 'must be true or false');
      return store.transaction(async (tx) => {
        const v = await validate(tx, input.tableId as string, input.name, input.trigger, input.nodes ?? []);
        const now = nowIso();
        const id = newId('wfl');
        await tx.db.insert(workflows).values({ id, tableId: input.tableId as string, ...v, enabled: (input.enabled as boolean | undefined) ?? true, createdAt: now, updatedAt: now });
        await refresh(tx);
        return load(tx, id);
      });
    },

    async updateWorkflow(id: string, input: WorkflowInput): Promise<Workflow> {
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean') throw invalidField('enabled', 'must be true or false');
      return store.transaction(async (tx) => {
        const current = await load(tx, id);
        if (input.tableId !== undefined && input.tableId !== current.tableId) throw invalidField('table_id', 'a workflow cannot move to another table');
        const v = await validate(tx, current.tableId, input.name ?? current.name, input.trigger ?? current.trigger, input.nodes ?? current.nodes);
        await tx.db.update(workflows).set({ ...v, enabled: (input.enabled as boolean | undefined) ?? current.enabled, updatedAt: nowIso() }).where(eq(workflows.id, id));
        await refresh(tx);
        return load(tx, id);
      });
    },

    async deleteWorkflow(id: string): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        await load(tx, id);
        await tx.db.delete(workflows).where(eq(workflows.id, id));
        await refresh(tx);
        return { id, deleted: true as const };
      });
    },

    async triggerWorkflow(id: string, recordId: unknown): Promise<{ runId: string; status: 'queued' }> {
      if (typeof recordId !== 'string' || !recordId) throw invalidField('record_id', 'is required');
      const runId = await store.transaction(async (tx) => {
        const w = await load(tx, id);
        if (!w.enabled) throw conflict(`Workflow ${id} is disabled`);
        if (!(await tx.records.existing(w.tableId, [recordId])).has(recordId)) throw notFound(`Record ${recordId} not found in table ${w.tableId}`);
        const [queued] = await enqueue(tx, w, [recordId], 'manual', 0);
        runsQueued(tx);
        return queued;
      });
      return { runId, status: 'queued' };
    },

    async listRuns(id: string, page?: number | null, pageSize?: number | null): Promise<Page<RunEntry>> {
      await load(store, id);
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const rows = await store.db.select().from(workflowRuns).where(eq(workflowRuns.workflowId, id))
        .orderBy(desc(store.insertionOrder)).limit(p.pageSize).offset(p.offset);
      const total = (await first(store.db.select({ n: count() }).from(workflowRuns).where(eq(workflowRuns.workflowId, id))))!.n;
      return { items: rows.map(toRunEntry), total, page: p.page, pageSize: p.pageSize };
    },

    async getRun(runId: string): Promise<RunEntry> {
      const row = await first(store.db.select().from(workflowRuns).where(eq(workflowRuns.id, runId)).limit(1));
      if (!row) throw notFound(`Run ${runId} not found`);
      return toRunEntry(row);
    },
  };
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;
