// The event log of a base (contract section 14): changes to records, fields and tables, read by cursor.
import type { ApiEvent } from '../../src/domain/events.js';
import { builder } from '../builder.js';

export const Event = builder.objectRef<ApiEvent>('Event').implement({
  description: 'One change, written with it; `seq` increases within a base',
  fields: (t) => ({
    id: t.exposeID('id'),
    seq: t.exposeString('seq'),
    type: t.exposeString('type', { description: 'record.created|updated|deleted, field.*, table.*' }),
    baseId: t.id({ resolve: (e) => e.base_id }),
    tableId: t.id({ nullable: true, resolve: (e) => e.table_id }),
    recordId: t.id({ nullable: true, resolve: (e) => e.record_id }),
    actor: t.field({ type: 'JSON', description: '{type: user|app|workflow, id}', resolve: (e) => e.actor }),
    at: t.exposeString('at'),
    data: t.field({ type: 'JSON', resolve: (e) => e.data }),
  }),
});

const EventPage = builder.objectRef<{ items: ApiEvent[]; next: string | null }>('EventPage').implement({
  fields: (t) => ({
    items: t.field({ type: [Event], resolve: (p) => p.items }),
    next: t.string({ nullable: true, description: 'The cursor to pass as `after` for the next page; null at the end', resolve: (p) => p.next }),
  }),
});

builder.queryFields((t) => ({
  events: t.field({
    type: EventPage,
    description: 'Events of a base after a cursor, in seq order (base admins)',
    args: {
      baseId: t.arg.id({ required: true }),
      after: t.arg.string({ required: false }),
      limit: t.arg.int({ required: false }),
      tableId: t.arg.id({ required: false }),
      type: t.arg.string({ required: false }),
    },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.events.list(a.baseId, a),
  }),
}));
