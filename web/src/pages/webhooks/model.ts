// Webhooks of a base as the web app handles them: types, the GraphQL selections, and the event types one can subscribe to.
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
  /** Only in createWebhook's answer. */
  secret?: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
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

export const WEBHOOK_FIELDS = 'id baseId url events tableId enabled disabledReason consecutiveFailures createdAt updatedAt';
export const DELIVERY_FIELDS = 'id webhookId eventId eventType status attempts lastStatus lastError nextAttemptAt createdAt deliveredAt';

/** The event types of contract section 14, grouped by what changed. */
export const EVENT_GROUPS: Array<{ label: string; types: string[] }> = [
  { label: 'Records', types: ['record.created', 'record.updated', 'record.deleted'] },
  { label: 'Fields', types: ['field.created', 'field.updated', 'field.deleted'] },
  { label: 'Tables', types: ['table.created', 'table.updated', 'table.deleted'] },
  { label: 'Views', types: ['view.created', 'view.updated', 'view.deleted'] },
];
export const ALL_EVENTS = '*';

/** The badge colour of a delivery's status. */
export const deliveryColor = (s: DeliveryStatus) => (s === 'delivered' ? 'green' : s === 'failed' ? 'red' : 'blue');
