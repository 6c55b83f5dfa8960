// Jobs, imports and exports (contract section 15). An import names a file the REST door spooled (`upload`); an export
// query checks the request and answers its plan, which the REST door streams as the file.
import type { UserActor } from '../../src/domain/deps.js';
import type { ApiJob } from '../../src/domain/jobs.js';
import { builder } from '../builder.js';

const JobType = builder.enumType('JobType', { values: ['import', 'export'] as const });
const JobStatus = builder.enumType('JobStatus', { values: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const });
const ExportFormat = builder.enumType('ExportFormat', { values: ['csv', 'xlsx'] as const });

const Job = builder.objectRef<ApiJob>('Job').implement({
  description: 'A background job: its progress, and the rows it could not import',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.expose('type', { type: JobType }),
    status: t.expose('status', { type: JobStatus }),
    tableId: t.exposeString('table_id', { nullable: true }),
    processed: t.exposeInt('processed', { description: 'Rows read so far' }),
    total: t.exposeInt('total', { nullable: true, description: 'Rows of the file: an estimate from its line count until the end' }),
    imported: t.exposeInt('imported'),
    failed: t.exposeInt('failed'),
    errors: t.field({ type: 'JSON', description: 'The first 1000 rows not imported: [{row, column, field, message}]', resolve: (j) => j.errors }),
    error: t.exposeString('error', { nullable: true, description: 'Why a failed job failed' }),
    createdBy: t.exposeString('created_by'),
    createdAt: t.exposeString('created_at'),
    startedAt: t.exposeString('started_at', { nullable: true }),
    finishedAt: t.exposeString('finished_at', { nullable: true }),
  }),
});

const ImportStarted = builder.objectRef<{ jobId: string; tableId: string }>('ImportStarted').implement({
  fields: (t) => ({ jobId: t.exposeID('jobId'), tableId: t.exposeID('tableId') }),
});


builder.queryFields((t) => ({
  job: t.field({
    type: Job,
    args: { id: t.arg.id({ required: true }) },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx) => ctx.services.jobs.getJob(ctx.actor!, a.id),
  }),
  exportRecords: t.field({
    type: 'JSON',
    description: 'Checks an export and answers its plan {tableId, format, filter, sort, fileName, contentType}; GET /api/v1/tables/{table_id}/export streams the file',
    args: {
      tableId: t.arg.id({ required: true }), format: t.arg({ type: ExportFormat, required: false }),
      filter: t.arg({ type: 'JSON', required: false }), sort: t.arg({ type: 'JSON', required: false }), viewId: t.arg.id({ required: false }),
    },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.exports.planExport(a.tableId, a, ctx.actor),
  }),
  openExportRecords: t.field({
    type: 'JSON',
    description: 'The Open API export (record:read): the plan the REST door streams',
    args: {
      baseId: t.arg.id({ required: true }), tableId: t.arg.id({ required: true }), format: t.arg({ type: ExportFormat, required: false }),
      filter: t.arg({ type: 'JSON', required: false }), sort: t.arg({ type: 'JSON', required: false }), viewId: t.arg.id({ required: false }),
    },
    authScopes: (_r, a) => ({ app: { scope: 'record:read', baseId: a.baseId } }),
    resolve: async (_r, a, ctx) => {
      await ctx.services.openApi.getTable(a.baseId, a.tableId);
      return ctx.services.exports.planExport(a.tableId, a, ctx.actor);
    },
  }),
}));

builder.mutationFields((t) => ({
  cancelJob: t.field({
    type: Job,
    args: { id: t.arg.id({ required: true }) },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx) => ctx.services.jobs.cancelJob(ctx.actor!, a.id),
  }),
  importRecords: t.field({
    type: ImportStarted,
    description: 'Queues an import into a table (editors): columns map to fields by options.mapping, else by exact name',
    args: {
      tableId: t.arg.id({ required: true }),
      upload: t.arg.string({ required: true, description: 'The id of a file spooled by the REST door (POST .../import)' }),
      fileName: t.arg.string({ required: false }),
      options: t.arg({ type: 'JSON', required: false, description: '{header, mapping} into a table; {header, name} as a new table' }),
    },
    authScopes: (_r, a) => ({ $all: { loggedIn: true, baseRole: { tableId: a.tableId, role: 'editor' } } }),
    resolve: (_r, a, ctx) => ctx.services.imports.importIntoTable(ctx.actor as UserActor, a.tableId, a.upload, a.fileName ?? 'import', a.options),
  }),
  importTable: t.field({
    type: ImportStarted,
    description: 'Queues an import as a new table (base admins), with a field per column and types inferred from the values',
    args: {
      baseId: t.arg.id({ required: true }),
      upload: t.arg.string({ required: true, description: 'The id of a file spooled by the REST door (POST .../import)' }),
      fileName: t.arg.string({ required: false }),
      options: t.arg({ type: 'JSON', required: false, description: '{header, mapping} into a table; {header, name} as a new table' }),
    },
    authScopes: (_r, a) => ({ $all: { loggedIn: true, baseRole: { baseId: a.baseId, role: 'admin' } } }),
    resolve: (_r, a, ctx) => ctx.services.imports.importNewTable(ctx.actor as UserActor, a.baseId, a.upload, a.fileName ?? 'Imported table', a.options),
  }),
}));
