// Webhooks as the API shows them, their secrets and the Standard Webhooks signature every delivery carries.
import { createHmac, randomBytes } from 'node:crypto';
import type { Schema } from '../../db/store.js';

/** After this many events in a row whose delivery failed (every attempt), a webhook is disabled (contract section 14). */
export const DISABLE_AFTER = 20;
/** Webhooks a base may have: each one multiplies the rows every write to the base queues. */
export const MAX_WEBHOOKS_PER_BASE = 50;
/** Deliveries a list shows, newest first. */
export const DELIVERY_LIST_LIMIT = 100;
/** The event type of a test delivery. */
export const PING = 'ping';

export interface Webhook {
  id: string;
  baseId: string;
  url: string;
  events: string[];
  tableId: string | null;
  enabled: boolean;
  disabledReason: string | null;
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
  /** Only in the answer to the create: the secret is never shown again. */
  secret?: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const satisfies readonly DeliveryStatus[];

export interface WebhookDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

type WebhookRow = Schema['webhooks']['$inferSelect'];
type DeliveryRow = Schema['webhookDeliveries']['$inferSelect'];

/** A stored webhook as the API shows it: without its secret. */
export function apiWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id, baseId: row.baseId, url: row.url, events: row.events, tableId: row.tableId, enabled: row.enabled,
    disabledReason: row.disabledReason, consecutiveFailures: row.consecutiveFailures, createdAt: row.createdAt, updatedAt: row.updatedAt,
  };
}

export function apiDelivery(row: Omit<DeliveryRow, 'payload' | 'leaseUntil'>): WebhookDelivery {
  return {
    id: row.id, webhookId: row.webhookId, eventId: row.eventId, eventType: row.eventType, status: row.status, attempts: row.attempts,
    lastStatus: row.lastStatus, lastError: row.lastError, nextAttemptAt: row.nextAttemptAt, createdAt: row.createdAt, deliveredAt: row.deliveredAt,
  };
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks' format). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the event id, the same on every retry), the time in Unix
 * seconds, and `v1,` + base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes after `whsec_`.
 */
export function signatureHeaders(secret: string, id: string, body: string, nowMs = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** Whether a webhook wants an event: its type (or `*`) is listed and, for a webhook of one table, the event is of it. */
export function wants(w: { events: string[]; tableId: string | null }, event: { type: string; table_id: string | null }): boolean {
  return (w.events.includes('*') || w.events.includes(event.type)) && (w.tableId === null || w.tableId === event.table_id);
}
