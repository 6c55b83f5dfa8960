// /api/v1/bases/{base_id}/events: the event log of a base, read by cursor (contract section 14).
import { ref, type Route } from '../route.js';

const restEvent = (e: Record<string, any>) => ({
  id: e.id, seq: e.seq, type: e.type, base_id: e.baseId, table_id: e.tableId, record_id: e.recordId, actor: e.actor, at: e.at, data: e.data,
});

export const eventRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/bases/{base_id}/events', family: 'v1', tag: 'events',
    summary: 'Events of a base after a cursor, in seq order (base admins); next is the cursor of the following page, null at the end',
    query: {
      after: { type: 'string', description: 'The seq to continue after (0 or absent: from the oldest kept)' },
      limit: { type: 'integer', description: '1 to 1000 (default 100)' },
      table_id: { type: 'string', description: 'Only events of this table' },
      type: { type: 'string', description: 'Only events of this type, e.g. record.updated' },
    },
    document: `query Events($baseId: ID!, $after: String, $limit: Int, $tableId: ID, $type: String) { events(baseId: $baseId, after: $after, limit: $limit, tableId: $tableId, type: $type) { items { id seq type baseId tableId recordId actor at data } next } }`,
    variables: ({ params, query }) => ({ baseId: params.base_id, after: query.after, limit: query.limit, tableId: query.table_id, type: query.type }),
    result: (d) => ({ items: d.events.items.map(restEvent), next: d.events.next }),
    response: ref('EventPage'),
  },
];
