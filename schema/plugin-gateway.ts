// The data calls of plugins (ui RPC and scripts) as GraphQL operations, scope-checked and run as the context's actor:
// the calling user, or the workflow of a run_script step (an editor of its own base only).
import type { GraphQLSchema } from 'graphql';
import type { PluginDataGateway } from '../src/domain/plugins.js';
import type { Context } from './context.js';
import { runOperation } from './run-operation.js';

const RECORD = 'id fields createdAt updatedAt';
/** Plugins see record values keyed by field name, under `values`. */
const pluginRecord = (r: { id: string; fields: unknown; createdAt: string; updatedAt: string }) => ({ id: r.id, values: r.fields, createdAt: r.createdAt, updatedAt: r.updatedAt });

export function pluginGateway(schema: GraphQLSchema, ctx: Context): PluginDataGateway {
  const run = <T = any>(source: string, variables?: Record<string, unknown>) => runOperation<T>(schema, ctx, source, variables);
  return {
    async listTables(baseId) {
      const d = await run('query PluginTables($b: ID) { tables(baseId: $b, pageSize: 1000) { items { id name description } } }', { b: baseId });
      return d.tables.items;
    },
    async getSchema(tableId) {
      const d = await run('query PluginSchema($t: ID!) { table(id: $t) { id name description } fields(tableId: $t, pageSize: 1000) { items { id name type required options config } } }', { t: tableId });
      return { ...d.table, fields: d.fields.items };
    },
    async getRecords(tableId, q) {
      const page = `items { ${RECORD} } total page pageSize`;
      const d = q.search
        ? (await run(`query PluginSearch($t: ID!, $q: String!, $p: Int, $s: Int) { list: searchRecords(tableId: $t, q: $q, page: $p, pageSize: $s) { ${page} } }`, { t: tableId, q: q.search, p: q.page, s: q.perPage }))
        : (await run(`query PluginRecords($t: ID!, $p: Int, $s: Int) { list: records(tableId: $t, page: $p, pageSize: $s) { ${page} } }`, { t: tableId, p: q.page, s: q.perPage }));
      return { items: d.list.items.map(pluginRecord), total: d.list.total, page: d.list.page, per_page: d.list.pageSize };
    },
    async getRecord(tableId, recordId) {
      const d = await run(`query PluginRecord($t: ID!, $id: ID!) { record(tableId: $t, id: $id) { ${RECORD} } }`, { t: tableId, id: recordId });
      return pluginRecord(d.record);
    },
    async createRecord(tableId, values) {
      const d = await run(`mutation PluginCreate($t: ID!, $v: JSON!) { createRecord(tableId: $t, fields: $v) { ${RECORD} } }`, { t: tableId, v: values });
      return pluginRecord(d.createRecord);
    },
    async updateRecord(tableId, recordId, values) {
      const d = await run(`mutation PluginUpdate($t: ID!, $id: ID!, $v: JSON!) { updateRecord(tableId: $t, id: $id, fields: $v) { ${RECORD} } }`, { t: tableId, id: recordId, v: values });
      return pluginRecord(d.updateRecord);
    },
    async deleteRecord(tableId, recordId) {
      const d = await run('mutation PluginDelete($t: ID!, $id: ID!) { deleteRecord(tableId: $t, id: $id) { id deleted } }', { t: tableId, id: recordId });
      return d.deleteRecord;
    },
  };
}
