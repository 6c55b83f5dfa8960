// Workflow definitions (contract section 5): validation when saved, triggers fired inside record writes, manual runs and logs.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { plugins, tables as tablesTable, workflowRuns, workflows } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
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
  node_id: string;
  type: string;
  status: 'success' | 'failed' | 'skipped';
  started_at: string | null;
  finished_at: string | null;
  output: unknown;
  error: string | null;
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
export interface WorkflowInput {
  name?: unknown;
  tableId?: unknown;
  enabled?: unknown;
  trigger?: unknown;
  nodes?: unknown;
}


export function toRunEntry(row: typeof workflowRuns.$inferSelect): RunEntry {
  return {
    runId: row.id, workflowId: row.workflowId, status: row.status, trigger: { type: row.triggerType, recordId: row.recordId },
    depth: row.depth, queuedAt: row.queuedAt, startedAt: row.startedAt, finishedAt: row.finishedAt, error: row.error, steps: row.steps as RunStep[],
  };
}

export function createWorkflowService(deps: Deps, bases: BaseService, fieldService: FieldService, records: RecordService) {
  const { sqlite, orm } = deps;
  /** Enabled workflows by table, so a record write costs no query when its table has none. */
  let enabledByTable = new Map<string, Workflow[]>();
  let wake: () => void = () => {};

  function refresh() {
    const next = new Map<string, Workflow[]>();
    for (const w of orm.select().from(workflows).where(eq(workflows.enabled, true)).all() as Workflow[]) {
      next.set(w.tableId, [...(next.get(w.tableId) ?? []), w]);
    }
    enabledByTable = next;
  }
  refresh();

  // Prepared once: every run loads its workflow.
  const byId = orm.select().from(workflows).where(eq(workflows.id, sql.placeholder('id'))).prepare();
  function load(id: string): Workflow {
    const row = byId.get({ id });
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
  function checkFieldValues(values: unknown, where: string, targetFields: FieldDef[], templateFields: FieldDef[], earlier: Set<string>, baseId: string) {
    if (!isObject(values) || Object.keys(values).length === 0) throw invalidField(where, 'must be a non-empty object of field values');
    const resolve = fieldResolver(targetFields);
    const ctx = fieldService.memberContext(baseId);
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

  /** Validates a whole definition; every problem is a 400 naming where it is. */
  function validate(tableId: string, name: unknown, trigger: unknown, nodes: unknown) {
    const table = orm.select().from(tablesTable).where(eq(tablesTable.id, tableId)).get();
    if (!table) throw invalidField('table_id', `table ${tableId} does not exist`);
    const fields = fieldService.loadFields(tableId);
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
    const normalized: WorkflowNode[] = nodes.map((node, i) => {
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
          checkFieldValues(config.fields, `${where}.config.fields`, fields, fields, seen, table.baseId);
          break;
        case 'create_record': {
          if (typeof config.table_id !== 'string') throw invalidField(`${where}.config.table_id`, 'is required');
          const target = orm.select().from(tablesTable).where(eq(tablesTable.id, config.table_id)).get();
          if (!target || target.baseId !== table.baseId) throw invalidField(`${where}.config.table_id`, `table ${config.table_id} is not a table of this base`);
          checkFieldValues(config.fields, `${where}.config.fields`, fieldService.loadFields(target.id), fields, seen, table.baseId);
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
            const plugin = orm.select({ type: plugins.type }).from(plugins).where(eq(plugins.id, config.plugin_id)).get();
            if (!plugin) throw invalidField(`${where}.config.plugin_id`, `plugin ${config.plugin_id} is not installed`);
            if (plugin.type !== 'script') throw invalidField(`${where}.config.plugin_id`, `plugin ${config.plugin_id} is a ui plugin; run_script needs a script plugin`);
          }
          if (config.params !== undefined && !isObject(config.params)) throw invalidField(`${where}.config.params`, 'must be an object');
          checkTemplates(config.params, `${where}.config.params`, fields, seen);
          break;
      }
      seen.add(id);
      return { id, type, config };
    });
    return { name: name.trim(), trigger: { type: trigger.type as Workflow['trigger']['type'], config: tconfig }, nodes: normalized };
  }

  const insertRun = sqlite.prepare(`INSERT INTO workflow_runs (id, workflow_id, table_id, record_id, trigger_type, depth, status, queued_at, finished_at, error, steps)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]')`);

  /** Queues a run in the current transaction; past the chain depth it is recorded as failed with loop_limit. */
  function enqueue(w: Workflow, recordId: string, triggerType: string, depth: number): string {
    const id = newId('run');
    const now = nowIso();
    if (depth > MAX_CHAIN_DEPTH) {
      insertRun.run(id, w.id, w.tableId, recordId, triggerType, depth, 'failed', now, now,
        `loop_limit: workflow-caused changes chained deeper than ${MAX_CHAIN_DEPTH}`);
    } else {
      insertRun.run(id, w.id, w.tableId, recordId, triggerType, depth, 'queued', now, null, null);
    }
    return id;
  }

  /** A watched field really changed: compares values before and after by their JSON form. */
  function watchedChanged(w: Workflow, change: RecordChange, recordId: string, after: Record<string, unknown>): boolean {
    const before = change.before?.get(recordId)?.fields;
    if (!before) return true;
    const resolve = fieldResolver(change.fields);
    const watched = Array.isArray(w.trigger.config.fields)
      ? (w.trigger.config.fields as string[]).map((f) => resolve(f)).filter((f): f is FieldDef => !!f)
      : change.fields.filter((f) => !fieldType(f.type).readOnly);
    return watched.some((f) => JSON.stringify(before[f.name] ?? null) !== JSON.stringify(after[f.name] ?? null));
  }

  records.onChange({
    wantsBefore: (tableId) => (enabledByTable.get(tableId) ?? []).some((w) => w.trigger.type === 'record_updated'),
    changed(change) {
      const candidates = (enabledByTable.get(change.tableId) ?? []).filter((w) =>
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
            const matching = deps.store.matching(change.tableId, where, recs.map((r) => r.id));
            recs = recs.filter((r) => matching.has(r.id));
          }
        }
        for (const r of recs) enqueue(w, r.id, w.trigger.type, change.depth);
        queued += recs.length;
      }
      // The runner looks once the write has committed (it runs after this synchronous transaction).
      if (queued) setImmediate(wake);
    },
  });

  return {
    /** The runner registers how to be woken when runs are queued. */
    setWake(fn: () => void) {
      wake = fn;
    },
    loadWorkflow: load,

    async listWorkflows(actor: Actor, tableId: string | null | undefined, page?: number | null, pageSize?: number | null): Promise<Page<Workflow>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      let where;
      if (tableId) where = eq(workflows.tableId, tableId);
      else {
        const ids = bases.readableBaseIds(actor);
        if (ids !== 'all') {
          const tableIds = ids.length ? orm.select({ id: tablesTable.id }).from(tablesTable).where(inArray(tablesTable.baseId, ids)).all().map((t) => t.id) : [];
          where = inArray(workflows.tableId, tableIds);
        }
      }
      const items = orm.select().from(workflows).where(where).orderBy(asc(workflows.createdAt), asc(workflows.id)).limit(p.pageSize).offset(p.offset).all() as Workflow[];
      const total = orm.select({ n: count() }).from(workflows).where(where).get()!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    async getWorkflow(id: string): Promise<Workflow> {
      return load(id);
    },

    async createWorkflow(input: WorkflowInput): Promise<Workflow> {
      if (typeof input.tableId !== 'string' || !input.tableId) throw invalidField('table_id', 'is required');
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean') throw invalidField('enabled', 'must be true or false');
      return writeTransaction(sqlite, () => {
        const v = validate(input.tableId as string, input.name, input.trigger, input.nodes ?? []);
        const now = nowIso();
        const id = newId('wfl');
        orm.insert(workflows).values({ id, tableId: input.tableId as string, ...v, enabled: (input.enabled as boolean | undefined) ?? true, createdAt: now, updatedAt: now }).run();
        refresh();
        return load(id);
      });
    },

    async updateWorkflow(id: string, input: WorkflowInput): Promise<Workflow> {
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean') throw invalidField('enabled', 'must be true or false');
      return writeTransaction(sqlite, () => {
        const current = load(id);
        if (input.tableId !== undefined && input.tableId !== current.tableId) throw invalidField('table_id', 'a workflow cannot move to another table');
        const v = validate(current.tableId, input.name ?? current.name, input.trigger ?? current.trigger, input.nodes ?? current.nodes);
        orm.update(workflows).set({ ...v, enabled: (input.enabled as boolean | undefined) ?? current.enabled, updatedAt: nowIso() }).where(eq(workflows.id, id)).run();
        refresh();
        return load(id);
      });
    },

    async deleteWorkflow(id: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        load(id);
        orm.delete(workflows).where(eq(workflows.id, id)).run();
        refresh();
        return { id, deleted: true as const };
      });
    },

    async triggerWorkflow(id: string, recordId: unknown): Promise<{ runId: string; status: 'queued' }> {
      if (typeof recordId !== 'string' || !recordId) throw invalidField('record_id', 'is required');
      const runId = writeTransaction(sqlite, () => {
        const w = load(id);
        if (!w.enabled) throw conflict(`Workflow ${id} is disabled`);
        if (!deps.store.existing(w.tableId, [recordId]).has(recordId)) throw notFound(`Record ${recordId} not found in table ${w.tableId}`);
        return enqueue(w, recordId, 'manual', 0);
      });
      setImmediate(wake);
      return { runId, status: 'queued' };
    },

    async listRuns(id: string, page?: number | null, pageSize?: number | null): Promise<Page<RunEntry>> {
      load(id);
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const rows = orm.select().from(workflowRuns).where(eq(workflowRuns.workflowId, id))
        .orderBy(desc(sql`rowid`)).limit(p.pageSize).offset(p.offset).all();
      const total = orm.select({ n: count() }).from(workflowRuns).where(eq(workflowRuns.workflowId, id)).get()!.n;
      return { items: rows.map(toRunEntry), total, page: p.page, pageSize: p.pageSize };
    },

    async getRun(runId: string): Promise<RunEntry> {
      const row = orm.select().from(workflowRuns).where(and(eq(workflowRuns.id, runId))).get();
      if (!row) throw notFound(`Run ${runId} not found`);
      return toRunEntry(row);
    },
  };
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;
