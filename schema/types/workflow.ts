// Workflows: definitions bound to a table, manual runs and run logs.
import { NODE_TYPES, TRIGGER_TYPES, type RunEntry, type Workflow as WorkflowShape } from '../../src/domain/workflows.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

/** What starts a run. */
export const WorkflowTriggerType = builder.enumType('WorkflowTriggerType', { values: TRIGGER_TYPES });
/** What a step does. */
export const WorkflowNodeType = builder.enumType('WorkflowNodeType', { values: NODE_TYPES });
/** Where a run is: queued and running while pending, then success or failed. */
export const WorkflowRunStatus = builder.enumType('WorkflowRunStatus', {
  values: ['queued', 'running', 'success', 'failed'] as const satisfies ReadonlyArray<RunEntry['status']>,
});

const WorkflowTrigger = builder.objectRef<WorkflowShape['trigger']>('WorkflowTrigger').implement({
  fields: (t) => ({
    type: t.expose('type', { type: WorkflowTriggerType }),
    config: t.field({ type: 'JSON', description: 'record_updated: {fields?, condition?}; the others: {condition?}', resolve: (tr) => tr.config }),
  }),
});

const WorkflowNode = builder.objectRef<WorkflowShape['nodes'][number]>('WorkflowNode').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.expose('type', { type: WorkflowNodeType }),
    config: t.field({ type: 'JSON', resolve: (n) => n.config }),
  }),
});

export const Workflow = builder.objectRef<WorkflowShape>('Workflow').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    tableId: t.exposeID('tableId'),
    enabled: t.exposeBoolean('enabled'),
    trigger: t.field({ type: WorkflowTrigger, resolve: (w) => w.trigger }),
    nodes: t.field({ type: [WorkflowNode], resolve: (w) => w.nodes }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});
const WorkflowPage = pageOf<WorkflowShape>('Workflow', Workflow);

const Run = builder.objectRef<RunEntry>('WorkflowRun').implement({
  fields: (t) => ({
    runId: t.exposeID('runId'),
    workflowId: t.exposeID('workflowId'),
    status: t.expose('status', { type: WorkflowRunStatus }),
    // Runs are queued with their workflow's trigger type or `manual` (workflows.ts, enqueue).
    triggerType: t.field({ type: WorkflowTriggerType, resolve: (r) => r.trigger.type as WorkflowShape['trigger']['type'] }),
    recordId: t.string({ nullable: true, resolve: (r) => r.trigger.recordId }),
    depth: t.exposeInt('depth'),
    queuedAt: t.exposeString('queuedAt'),
    startedAt: t.exposeString('startedAt', { nullable: true }),
    finishedAt: t.exposeString('finishedAt', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    steps: t.field({ type: 'JSON', description: '[{node_id, type, status, started_at, finished_at, output, error}]', resolve: (r) => r.steps }),
  }),
});
const RunPage = pageOf<RunEntry>('WorkflowRun', Run);

const TriggerResult = builder.objectRef<{ runId: string; status: RunEntry['status'] }>('TriggerResult').implement({
  fields: (t) => ({ runId: t.exposeID('runId'), status: t.expose('status', { type: WorkflowRunStatus }) }),
});

const WorkflowTriggerInput = builder.inputType('WorkflowTriggerInput', {
  fields: (t) => ({
    type: t.field({ type: WorkflowTriggerType, required: true }),
    config: t.field({ type: 'JSON', required: false, description: 'record_updated: {fields?, condition?}; the others: {condition?} (default {})' }),
  }),
});

const WorkflowNodeInput = builder.inputType('WorkflowNodeInput', {
  fields: (t) => ({
    id: t.string({ required: false, description: '1 to 64 letters, digits, _ or - (default n1, n2, ... by position)' }),
    type: t.field({ type: WorkflowNodeType, required: true }),
    config: t.field({ type: 'JSON', required: false, description: 'The settings of the node type (default {})' }),
  }),
});

/** A new workflow (name, tableId and trigger required) or the keys of one to change; the service checks it can run. */
const WorkflowInput = builder.inputType('WorkflowInput', {
  fields: (t) => ({
    name: t.string({ required: false }),
    tableId: t.id({ required: false }),
    enabled: t.boolean({ required: false, description: 'Default true' }),
    trigger: t.field({ type: WorkflowTriggerInput, required: false }),
    nodes: t.field({ type: [WorkflowNodeInput], required: false, description: 'Run in order, at most 50' }),
  }),
});

builder.queryFields((t) => ({
  workflows: t.field({
    type: WorkflowPage,
    args: { tableId: t.arg.id({ required: false }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => (a.tableId ? { baseRole: { tableId: a.tableId, role: 'viewer' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.workflows.listWorkflows(ctx.actor!, a.tableId || null, a.page, a.pageSize),
  }),
  workflow: t.field({
    type: Workflow,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: a.id, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.getWorkflow(a.id),
  }),
  workflowRuns: t.field({
    type: RunPage,
    description: 'Run log of a workflow, newest first (base admins)',
    args: { workflowId: t.arg.id({ required: true }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: a.workflowId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.listRuns(a.workflowId, a.page, a.pageSize),
  }),
}));

builder.mutationFields((t) => ({
  createWorkflow: t.field({
    type: Workflow,
    args: { input: t.arg({ type: WorkflowInput, required: true }) },
    authScopes: (_r, a) => (typeof a.input.tableId === 'string' ? { baseRole: { tableId: a.input.tableId, role: 'admin' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.workflows.createWorkflow(a.input),
  }),
  updateWorkflow: t.field({
    type: Workflow,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: WorkflowInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.updateWorkflow(a.id, a.input),
  }),
  deleteWorkflow: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.deleteWorkflow(a.id),
  }),
  triggerWorkflow: t.field({
    type: TriggerResult,
    description: 'Queues a run for one record of the workflow\'s table (editors and above)',
    args: { id: t.arg.id({ required: true }), recordId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: a.id, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.triggerWorkflow(a.id, a.recordId),
  }),
}));
