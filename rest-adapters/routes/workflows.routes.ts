// /api/v1/workflows: definitions, manual triggers and run logs.
import { restPage, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const workflowBody = {
  name: { type: 'string' },
  table_id: { type: 'string' },
  enabled: { type: 'boolean', description: 'Default true' },
  trigger: { type: 'object', description: '{type: record_created|record_updated|manual, config: {fields?, condition?}}' },
  nodes: { type: 'array', items: { type: 'object' }, description: '[{id?, type, config}] run in order' },
};
type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The keys WorkflowInput's trigger and nodes have: REST keeps ignoring other keys, as the workflow service does. */
const pick = (o: Json, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
const triggerInput = (t: unknown) => (isObject(t) ? pick(t, ['type', 'config']) : t);
const nodeInput = (n: unknown) => (isObject(n) ? pick(n, ['id', 'type', 'config']) : n);
const workflowInput = (b: Json) => ({
  name: b.name, tableId: b.table_id, enabled: b.enabled, trigger: triggerInput(b.trigger), nodes: Array.isArray(b.nodes) ? b.nodes.map(nodeInput) : b.nodes,
});

export const restWorkflow = (w: Record<string, any>) => ({
  id: w.id, name: w.name, table_id: w.tableId, enabled: w.enabled, trigger: w.trigger, nodes: w.nodes, created_at: w.createdAt, updated_at: w.updatedAt,
});
export const restRun = (r: Record<string, any>) => ({
  run_id: r.runId, workflow_id: r.workflowId, status: r.status, trigger: { type: r.triggerType, record_id: r.recordId }, depth: r.depth,
  queued_at: r.queuedAt, started_at: r.startedAt, finished_at: r.finishedAt, error: r.error, steps: r.steps,
});

export const workflowRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/workflows', family: 'v1', tag: 'workflows', summary: 'Workflows of a table (table_id), or of every readable base',
    query: { table_id: { type: 'string', description: 'Only the workflows of this table' }, ...pageQuery(20) },
    document: `query Workflows($tableId: ID, $page: Int, $pageSize: Int) { workflows(tableId: $tableId, page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.workflow)} } }`,
    variables: ({ query }) => ({ tableId: query.table_id, ...pageVars(query) }),
    result: (d) => restPage(restWorkflow)(d.workflows),
    response: pageSchema('Workflow'),
  },
  {
    method: 'POST', path: '/api/v1/workflows', family: 'v1', tag: 'workflows', status: 201,
    summary: 'Create a workflow; a definition that cannot run is refused naming the problem',
    body: body(workflowBody, ['name', 'table_id', 'trigger']),
    document: `mutation CreateWorkflow($input: WorkflowInput!) { createWorkflow(input: $input) { ${SELECT.workflow} } }`,
    variables: ({ body: b }) => ({ input: workflowInput(b) }),
    result: (d) => restWorkflow(d.createWorkflow),
    response: ref('Workflow'),
  },
  {
    method: 'GET', path: '/api/v1/workflows/{workflow_id}', family: 'v1', tag: 'workflows', summary: 'One workflow',
    document: `query Workflow($id: ID!) { workflow(id: $id) { ${SELECT.workflow} } }`,
    variables: ({ params }) => ({ id: params.workflow_id }),
    result: (d) => restWorkflow(d.workflow),
    response: ref('Workflow'),
  },
  {
    method: 'PUT', path: '/api/v1/workflows/{workflow_id}', family: 'v1', tag: 'workflows', summary: 'Change a workflow (name, enabled, trigger, nodes)',
    body: body(workflowBody),
    document: `mutation UpdateWorkflow($id: ID!, $input: WorkflowInput!) { updateWorkflow(id: $id, input: $input) { ${SELECT.workflow} } }`,
    variables: ({ params, body: b }) => ({ id: params.workflow_id, input: workflowInput(b) }),
    result: (d) => restWorkflow(d.updateWorkflow),
    response: ref('Workflow'),
  },
  {
    method: 'DELETE', path: '/api/v1/workflows/{workflow_id}', family: 'v1', tag: 'workflows', summary: 'Delete a workflow and its run log',
    document: 'mutation DeleteWorkflow($id: ID!) { deleteWorkflow(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.workflow_id }),
    result: (d) => d.deleteWorkflow,
    response: deleted,
  },
  {
    method: 'POST', path: '/api/v1/workflows/{workflow_id}/trigger', family: 'v1', tag: 'workflows',
    summary: 'Queue a run for one record of the workflow\'s table (409 when disabled)',
    body: body({ record_id: { type: 'string' } }, ['record_id']),
    document: 'mutation TriggerWorkflow($id: ID!, $recordId: ID) { triggerWorkflow(id: $id, recordId: $recordId) { runId status } }',
    variables: ({ params, body: b }) => ({ id: params.workflow_id, recordId: b.record_id }),
    result: (d) => ({ run_id: d.triggerWorkflow.runId, status: d.triggerWorkflow.status }),
    response: { type: 'object', properties: { run_id: { type: 'string' }, status: { const: 'queued' } }, required: ['run_id', 'status'], additionalProperties: false },
  },
  {
    method: 'GET', path: '/api/v1/workflows/{workflow_id}/logs', family: 'v1', tag: 'workflows', summary: 'Run log entries with per-step detail, newest first',
    query: pageQuery(20),
    document: `query WorkflowRuns($id: ID!, $page: Int, $pageSize: Int) { workflowRuns(workflowId: $id, page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.run)} } }`,
    variables: ({ params, query }) => ({ id: params.workflow_id, ...pageVars(query) }),
    result: (d) => restPage(restRun)(d.workflowRuns),
    response: pageSchema('RunEntry'),
  },
];
