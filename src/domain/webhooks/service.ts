// Webhooks of a base (contract section 14): create, change, delete, list; test pings, redeliveries and the delivery log.
// Who may call is decided by the schema's scopes (base admins); this checks the input and keeps the rules.
import { and, count, desc, eq, inArray, lt } from 'drizzle-orm';
import { first, type UnitOfWork } from '../../db/store.js';
import { conflict, invalidField, notFound } from '../../errors.js';
import { newId, nowIso } from '../../ids.js';
import { BlockedError, checkTarget } from '../../net/ssrf-guard.js';
import type { Actor, Deps } from '../deps.js';
import { EVENT_TYPES } from '../events.js';
import type { DeliveryQueue } from './queue.js';
import {
  apiDelivery, apiWebhook, DELIVERY_LIST_LIMIT, MAX_WEBHOOKS_PER_BASE, newSecret, PING, type Webhook, type WebhookDelivery,
} from './shapes.js';

/** The keys of a new webhook or of a change; absent keys are left as they are (create: url and events are required). */
export interface WebhookInput {
  url?: unknown;
  events?: unknown;
  tableId?: unknown;
  enabled?: unknown;
}

const MAX_URL = 2048;
const KNOWN_EVENTS = new Set<string>([...EVENT_TYPES, '*']);

export function createWebhookService(deps: Deps, queue: DeliveryQueue) {
  const { store, config } = deps;
  const { tables, webhooks, webhookDeliveries } = store.schema;

  function checkUrl(value: unknown): string {
    if (typeof value !== 'string' || !value.trim()) throw invalidField('url', 'must be an http or https URL');
    const url = value.trim();
    if (url.length > MAX_URL) throw invalidField('url', `must be at most ${MAX_URL} characters`);
    try {
      // What can be told now (scheme, credentials, a private IP literal); a name is checked on every attempt, after DNS.
      checkTarget(url, config.proxyAllowPrivate);
      return url;
    } catch (e) {
      if (e instanceof BlockedError) throw invalidField('url', e.message);
      throw e;
    }
  }

  function checkEvents(value: unknown): string[] {
    if (!Array.isArray(value) || !value.length) throw invalidField('events', 'must be a non-empty list of event types or "*"');
    for (const [i, type] of value.entries()) {
      if (typeof type !== 'string' || !KNOWN_EVENTS.has(type)) {
        throw invalidField(`events[${i}]`, `unknown event type ${JSON.stringify(type)}; use "*" or one of ${EVENT_TYPES.join(', ')}`);
      }
    }
    return [...new Set(value as string[])];
  }

  async function checkTable(tx: UnitOfWork, baseId: string, value: unknown): Promise<string | null> {
    if (value === null) return null;
    if (typeof value !== 'string' || !value) throw invalidField('table_id', 'must be a table id or null');
    const table = await first(tx.db.select({ id: tables.id }).from(tables).where(and(eq(tables.id, value), eq(tables.baseId, baseId))).limit(1));
    if (!table) throw invalidField('table_id', `no table ${value} in base ${baseId}`);
    return value;
  }

  function checkEnabled(value: unknown): boolean {
    if (typeof value !== 'boolean') throw invalidField('enabled', 'must be true or false');
    return value;
  }

  async function load(uow: UnitOfWork, id: string) {
    const row = await first(uow.db.select().from(webhooks).where(eq(webhooks.id, id)).limit(1));
    if (!row) throw notFound(`Webhook ${id} not found`);
    return row;
  }

  return {
    async listWebhooks(baseId: string): Promise<Webhook[]> {
      return (await store.db.select().from(webhooks).where(eq(webhooks.baseId, baseId)).orderBy(webhooks.createdAt, webhooks.id)).map(apiWebhook);
    },

    async getWebhook(id: string): Promise<Webhook> {
      return apiWebhook(await load(store, id));
    },

    /** A new webhook; its answer alone carries the secret. */
    async createWebhook(baseId: string, input: WebhookInput): Promise<Webhook> {
      if (input.url === undefined || input.url === null) throw invalidField('url', 'is required');
      if (input.events === undefined || input.events === null) throw invalidField('events', 'is required');
      const url = checkUrl(input.url);
      const events = checkEvents(input.events);
      const enabled = input.enabled === undefined || input.enabled === null ? true : checkEnabled(input.enabled);
      return store.transaction(async (tx) => {
        const tableId = input.tableId === undefined ? null : await checkTable(tx, baseId, input.tableId);
        const n = (await first(tx.db.select({ n: count() }).from(webhooks).where(eq(webhooks.baseId, baseId))))!.n;
        if (n >= MAX_WEBHOOKS_PER_BASE) throw conflict(`A base has at most ${MAX_WEBHOOKS_PER_BASE} webhooks`);
        const at = nowIso();
        const row = {
          id: newId('whk'), baseId, url, events, tableId, enabled, disabledReason: null, secret: newSecret(), consecutiveFailures: 0, createdAt: at, updatedAt: at,
        };
        await tx.db.insert(webhooks).values(row);
        await queue.changed(tx);
        return { ...apiWebhook(row), secret: row.secret };
      });
    },

    /** Changes the keys given; enabling a webhook clears why it was disabled and its failure count. */
    async updateWebhook(id: string, input: WebhookInput): Promise<Webhook> {
      const set: Partial<typeof webhooks.$inferInsert> = {};
      if (input.url !== undefined) set.url = checkUrl(input.url);
      if (input.events !== undefined) set.events = checkEvents(input.events);
      if (input.enabled !== undefined) set.enabled = checkEnabled(input.enabled);
      return store.transaction(async (tx) => {
        const row = await load(tx, id);
        if (input.tableId !== undefined) set.tableId = await checkTable(tx, row.baseId, input.tableId);
        if (set.enabled === true && !row.enabled) Object.assign(set, { disabledReason: null, consecutiveFailures: 0 });
        set.updatedAt = nowIso();
        await tx.db.update(webhooks).set(set).where(eq(webhooks.id, id));
        await queue.changed(tx);
        return apiWebhook({ ...row, ...set } as typeof row);
      });
    },

    /** Deletes a webhook with its delivery log; pending deliveries go with it. */
    async deleteWebhook(id: string): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        await load(tx, id);
        await tx.db.delete(webhooks).where(eq(webhooks.id, id)); // deliveries cascade
        await queue.changed(tx);
        return { id, deleted: true as const };
      });
    },

    /** Queues a `ping` to the webhook (an event of its own, not of the base's log); 409 while the webhook is disabled. */
    async testWebhook(actor: Actor | null, id: string): Promise<WebhookDelivery> {
      return store.transaction(async (tx) => {
        const w = await load(tx, id);
        if (!w.enabled) throw conflict('The webhook is disabled: enable it to send a test');
        const event = {
          id: newId('evt'), seq: null, type: PING, base_id: w.baseId, table_id: null, record_id: null,
          actor: { type: actor?.kind ?? 'user', id: actor?.id ?? null }, at: nowIso(), data: { webhook_id: w.id },
        };
        const [row] = await queue.insert(tx, [{ webhookId: w.id, eventId: event.id, eventType: PING, payload: JSON.stringify(event) }]);
        return apiDelivery({ ...row, lastStatus: null, lastError: null, deliveredAt: null });
      });
    },

    /**
     * Queues a delivered or failed delivery again as a new delivery with the same event and body (so the same
     * `webhook-id`, which receivers dedupe by); the old one stays in the log as it was. 409 while it is still pending or
     * the webhook is disabled.
     */
    async redeliverWebhookDelivery(webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
      return store.transaction(async (tx) => {
        const w = await load(tx, webhookId);
        const old = await first(tx.db.select().from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId))).limit(1));
        if (!old) throw notFound(`Delivery ${deliveryId} of webhook ${webhookId} not found`);
        if (old.status === 'pending') throw conflict('The delivery is still pending: it will be attempted again on its schedule');
        if (!w.enabled) throw conflict('The webhook is disabled: enable it to redeliver');
        const [row] = await queue.insert(tx, [{ webhookId, eventId: old.eventId, eventType: old.eventType, payload: old.payload }]);
        return apiDelivery({ ...row, lastStatus: null, lastError: null, deliveredAt: null });
      });
    },

    /** The newest deliveries of a webhook, newest first. */
    async listWebhookDeliveries(webhookId: string): Promise<WebhookDelivery[]> {
      await load(store, webhookId);
      const d = webhookDeliveries;
      const rows = await store.db.select({
        id: d.id, webhookId: d.webhookId, eventId: d.eventId, eventType: d.eventType, status: d.status, attempts: d.attempts, lastStatus: d.lastStatus,
        lastError: d.lastError, nextAttemptAt: d.nextAttemptAt, createdAt: d.createdAt, deliveredAt: d.deliveredAt,
      }).from(d).where(eq(d.webhookId, webhookId)).orderBy(desc(d.createdAt), desc(d.id)).limit(DELIVERY_LIST_LIMIT);
      return rows.map(apiDelivery);
    },

    /** Deletes delivered and failed deliveries older than the event log's retention; pending ones stay until settled. */
    async prune(now = Date.now()) {
      const before = new Date(now - config.eventRetentionDays * 86_400_000).toISOString();
      await store.transaction(async (tx) => void (await tx.db.delete(webhookDeliveries)
        .where(and(inArray(webhookDeliveries.status, ['delivered', 'failed']), lt(webhookDeliveries.createdAt, before)))));
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
