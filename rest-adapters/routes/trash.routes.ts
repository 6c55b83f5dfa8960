// /api/v1 trash and record history (contract section 16), mapped onto the trash operations of the GraphQL core.
import { ref, type Route } from '../route.js';
import { deleted } from './common.js';

const restItem = (i: Record<string, any>) => ({ id: i.id, type: i.type, name: i.name, table_id: i.tableId, deleted_at: i.deletedAt, deleted_by: i.deletedBy });

export const trashRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/bases/{base_id}/trash', family: 'v1', tag: 'trash',
    summary: 'The trash of a base, newest first: records for editors, everything for admins',
    document: 'query Trash($baseId: ID!) { trash(baseId: $baseId) { id type name tableId deletedAt deletedBy } }',
    variables: ({ params }) => ({ baseId: params.base_id }),
    result: (d) => d.trash.map(restItem),
    response: { type: 'array', items: ref('TrashItem') },
  },
  {
    method: 'POST', path: '/api/v1/trash/{trash_id}/restore', family: 'v1', tag: 'trash',
    summary: 'Restore a deleted item with its id and values (409 when its name is taken again)',
    document: 'mutation RestoreTrashItem($id: ID!) { restoreTrashItem(id: $id) { id type itemId } }',
    variables: ({ params }) => ({ id: params.trash_id }),
    result: (d) => ({ id: d.restoreTrashItem.id, type: d.restoreTrashItem.type, item_id: d.restoreTrashItem.itemId }),
    response: ref('Restored'),
  },
  {
    method: 'DELETE', path: '/api/v1/trash/{trash_id}', family: 'v1', tag: 'trash', summary: 'Remove a trash entry for good (base admins)',
    document: 'mutation PurgeTrashItem($id: ID!) { purgeTrashItem(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.trash_id }),
    result: (d) => d.purgeTrashItem,
    response: deleted,
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/records/{record_id}/history', family: 'v1', tag: 'records',
    summary: 'Changes of a record, newest first, from the event log (kept HISTORY_RETENTION_DAYS)',
    document: 'query RecordHistory($tableId: ID!, $id: ID!) { recordHistory(tableId: $tableId, id: $id) { at type actor changes } }',
    variables: ({ params }) => ({ tableId: params.table_id, id: params.record_id }),
    result: (d) => d.recordHistory,
    response: { type: 'array', items: ref('HistoryEntry') },
  },
];
