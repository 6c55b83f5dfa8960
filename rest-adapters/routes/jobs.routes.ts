// Import, export and jobs (contract section 15). Imports stream their upload into a file before the operation runs
// (`spool`); exports run an operation that checks the request and names the file, which the adapter streams (`download`).
import { ref, type Route } from '../route.js';

const JOB = 'id type status tableId processed total imported failed errors error createdBy createdAt startedAt finishedAt';
export const restJob = (j: Record<string, any>) => ({
  id: j.id, type: j.type, status: j.status, table_id: j.tableId, processed: j.processed, total: j.total, imported: j.imported,
  failed: j.failed, errors: j.errors, error: j.error, created_by: j.createdBy, created_at: j.createdAt, started_at: j.startedAt,
  finished_at: j.finishedAt,
});
const started = { type: 'object', properties: { job_id: { type: 'string' }, table_id: { type: 'string' } }, required: ['job_id', 'table_id'], additionalProperties: false };
const exportQuery = {
  format: { type: 'string' as const, description: 'csv (default) or xlsx' },
  filter: { type: 'string' as const, description: 'JSON filter, as the record list takes it' },
  sort: { type: 'string' as const, description: 'JSON sort keys, as the record list takes it' },
  view_id: { type: 'string' as const, description: 'A view of the table: its filter (ANDed with filter), its sort (unless sort is given) and its visible fields' },
};
const exportVars = (q: Record<string, unknown>) => ({ format: q.format, filter: q.filter, sort: q.sort, viewId: q.view_id });
const file = { type: 'string', format: 'binary' };

export const jobRoutes: Route[] = [
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/import', family: 'v1', tag: 'import-export', status: 202, bodyFormat: 'spool',
    requireBeforeBody: { role: 'editor', param: 'table_id' },
    summary: 'Import a CSV or XLSX file into a table (editors): multipart "file" and optional "options" ({header, mapping}); answers the job',
    document: 'mutation ImportRecords($tableId: ID!, $upload: String!, $fileName: String, $options: JSON) { importRecords(tableId: $tableId, upload: $upload, fileName: $fileName, options: $options) { jobId tableId } }',
    variables: ({ params, body: b }) => ({ tableId: params.table_id, upload: b.upload, fileName: b.fileName, options: b.options }),
    result: (d) => ({ job_id: d.importRecords.jobId, table_id: d.importRecords.tableId }),
    response: started,
  },
  {
    method: 'POST', path: '/api/v1/bases/{base_id}/import', family: 'v1', tag: 'import-export', status: 202, bodyFormat: 'spool',
    requireBeforeBody: { role: 'admin', param: 'base_id' },
    summary: 'Import a CSV or XLSX file as a new table (base admins), fields typed from the values; options {header, name}',
    document: 'mutation ImportTable($baseId: ID!, $upload: String!, $fileName: String, $options: JSON) { importTable(baseId: $baseId, upload: $upload, fileName: $fileName, options: $options) { jobId tableId } }',
    variables: ({ params, body: b }) => ({ baseId: params.base_id, upload: b.upload, fileName: b.fileName, options: b.options }),
    result: (d) => ({ job_id: d.importTable.jobId, table_id: d.importTable.tableId }),
    response: started,
  },
  {
    method: 'GET', path: '/api/v1/jobs/{job_id}', family: 'v1', tag: 'import-export', summary: 'A job: status, progress and the rows it could not import',
    document: `query Job($id: ID!) { job(id: $id) { ${JOB} } }`,
    variables: ({ params }) => ({ id: params.job_id }),
    result: (d) => restJob(d.job),
    response: ref('Job'),
  },
  {
    method: 'POST', path: '/api/v1/jobs/{job_id}/cancel', family: 'v1', tag: 'import-export',
    summary: 'Cancel a job: a queued one at once, a running one at its next chunk (what it wrote stays)',
    document: `mutation CancelJob($id: ID!) { cancelJob(id: $id) { ${JOB} } }`,
    variables: ({ params }) => ({ id: params.job_id }),
    result: (d) => restJob(d.cancelJob),
    response: ref('Job'),
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/export', family: 'v1', tag: 'import-export', download: true, query: exportQuery,
    summary: 'Every record of a table, filtered and sorted, streamed as CSV or XLSX (a header row of field names)',
    document: 'query ExportRecords($tableId: ID!, $format: ExportFormat, $filter: JSON, $sort: JSON, $viewId: ID) { exportRecords(tableId: $tableId, format: $format, filter: $filter, sort: $sort, viewId: $viewId) }',
    variables: ({ params, query }) => ({ tableId: params.table_id, ...exportVars(query) }),
    result: (d) => d.exportRecords,
    response: file,
  },
];

export const openJobRoutes: Route[] = [
  {
    method: 'GET', path: '/api/open/v1/bases/{base_id}/tables/{table_id}/export', family: 'open', tag: 'open-records', download: true, query: exportQuery,
    summary: 'Every record of a table, filtered and sorted, streamed as CSV or XLSX (record:read)',
    document: 'query OpenExportRecords($baseId: ID!, $tableId: ID!, $format: ExportFormat, $filter: JSON, $sort: JSON, $viewId: ID) { openExportRecords(baseId: $baseId, tableId: $tableId, format: $format, filter: $filter, sort: $sort, viewId: $viewId) }',
    variables: ({ params, query }) => ({ baseId: params.base_id, tableId: params.table_id, ...exportVars(query) }),
    result: (d) => d.openExportRecords,
    response: file,
  },
];
