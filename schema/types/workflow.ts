// Workflows: definitions bound to a table, manual runs and run logs.
import type { RunEntry, Workflow as WorkflowShape } from '../../src/domain/workflows.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

const WorkflowNode = builder.objectRef<WorkflowShape['nodes'][number]>('WorkflowNode').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    config: t.field({ type: 'JSON', resolve: (n) => n.config }),
  }),
});

export const Workflow = builder.objectRef<WorkflowShape>('Workflow').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    tableId: t.exposeID('tableId'),
    enabled: t.exposeBoolean('enabled'),
    trigger: t.field({ type: 'JSON', description: '{type, config}', resolve: (w) => w.trigger }),
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
    status: t.exposeString('status'),
    triggerType: t.string({ resolve: (r) => r.trigger.type }),
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

const TriggerResult = builder.objectRef<{ runId: string; status: string }>('TriggerResult').implement({
  fields: (t) => ({ runId: t.exposeID('runId'), status: t.exposeString('status') }),
});

const WorkflowInput = builder.inputType('WorkflowInput', {
  fields: (t) => ({
    name: t.field({ type: 'JSON', required: false }),
    tableId: t.field({ type: 'JSON', required: false }),
    enabled: t.field({ type: 'JSON', required: false }),
    trigger: t.field({ type: 'JSON', required: false }),
    nodes: t.field({ type: 'JSON', required: false }),
  }),
});

builder.queryFields((t) => ({
  workflows: t.field({
    type: WorkflowPage,
    args: { tableId: t.arg.id({ required: false }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => (a.tableId ? { baseRole: { tableId: String(a.tableId), role: 'viewer' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.workflows.listWorkflows(ctx.actor!, a.tableId ? String(a.tableId) : null, a.page, a.pageSize),
  }),
  workflow: t.field({
    type: Workflow,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: String(a.id), role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.getWorkflow(String(a.id)),
  }),
  workflowRuns: t.field({
    type: RunPage,
    description: 'Run log of a workflow, newest first (base admins)',
    args: { workflowId: t.arg.id({ required: true }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: String(a.workflowId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.listRuns(String(a.workflowId), a.page, a.pageSize),
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
    authScopes: (_r, a) => ({ baseRole: { workflowId: String(a.id), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.updateWorkflow(String(a.id), a.input),
  }),
  deleteWorkflow: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: String(a.id), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.deleteWorkflow(String(a.id)),
  }),
  triggerWorkflow: t.field({
    type: TriggerResult,
    description: 'Queues a run for one record of the workflow\'s table (editors and above)',
    args: { id: t.arg.id({ required: true }), recordId: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { workflowId: String(a.id), role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.workflows.triggerWorkflow(String(a.id), a.recordId),
  }),
}));
