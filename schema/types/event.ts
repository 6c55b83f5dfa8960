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

/** Where a subscription starts: `after`, else a reconnecting client's Last-Event-ID, else now (only new events). */
const startAfter = (after: string | null | undefined, lastEventId: string | null | undefined) => after ?? lastEventId ?? null;

builder.subscriptionFields((t) => ({
  tableEvents: t.field({
    type: Event,
    description: 'Events of a table as they commit, in seq order; with `after` (or SSE Last-Event-ID) every event after that seq first, none twice',
    args: { tableId: t.arg.id({ required: true }), after: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    subscribe: async (_r, a, ctx) => {
      const table = await ctx.services.tables.getTable(a.tableId);
      return ctx.services.events.stream(table.baseId, { tableId: a.tableId, after: startAfter(a.after, ctx.lastEventId), signal: ctx.signal, stillAllowed: () => ctx.services.access.canRead(ctx.actor, table.baseId) });
    },
    resolve: (e: ApiEvent) => e,
  }),
  baseEvents: t.field({
    type: Event,
    description: 'Events of a base as they commit, in seq order; with `after` (or SSE Last-Event-ID) every event after that seq first, none twice',
    args: { baseId: t.arg.id({ required: true }), after: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'viewer' } }),
    subscribe: (_r, a, ctx) =>
      ctx.services.events.stream(a.baseId, { after: startAfter(a.after, ctx.lastEventId), signal: ctx.signal, stillAllowed: () => ctx.services.access.canRead(ctx.actor, a.baseId) }),
    resolve: (e: ApiEvent) => e,
  }),
}));
