// /api/v1/bases/{base_id}/webhooks and /api/v1/webhooks: webhooks of a base and their delivery log (contract section 14).
import { ref, type Route } from '../route.js';
import { body, deleted } from './common.js';

const SELECT_WEBHOOK = 'id baseId url events tableId enabled disabledReason consecutiveFailures createdAt updatedAt';
const SELECT_DELIVERY = 'id webhookId eventId eventType status attempts lastStatus lastError nextAttemptAt createdAt deliveredAt';

const webhookBody = {
  url: { type: 'string', description: 'http(s) URL that receives the events; a private address is refused' },
  events: { type: 'array', items: { type: 'string' }, description: 'Event types (record.created, field.updated, ...) or "*"' },
  table_id: { type: ['string', 'null'], description: 'Only events of this table of the base (null or absent: every table)' },
  enabled: { type: 'boolean', description: 'Default true; enabling clears disabled_reason and the failure count' },
};
type Json = Record<string, any>;
const webhookInput = (b: Json) => ({ url: b.url, events: b.events, tableId: b.table_id, enabled: b.enabled });

const restWebhook = (w: Json) => ({
  id: w.id, base_id: w.baseId, url: w.url, events: w.events, table_id: w.tableId, enabled: w.enabled, disabled_reason: w.disabledReason,
  consecutive_failures: w.consecutiveFailures, created_at: w.createdAt, updated_at: w.updatedAt,
});
const restDelivery = (d: Json) => ({
  id: d.id, webhook_id: d.webhookId, event_id: d.eventId, event_type: d.eventType, status: d.status, attempts: d.attempts,
  last_status: d.lastStatus, last_error: d.lastError, next_attempt_at: d.nextAttemptAt, created_at: d.createdAt, delivered_at: d.deliveredAt,
});
const list = (item: string) => ({ type: 'array', items: ref(item) });

export const webhookRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/bases/{base_id}/webhooks', family: 'v1', tag: 'webhooks', summary: 'Webhooks of a base (base admins)',
    document: `query Webhooks($baseId: ID!) { webhooks(baseId: $baseId) { ${SELECT_WEBHOOK} } }`,
    variables: ({ params }) => ({ baseId: params.base_id }),
    result: (d) => d.webhooks.map(restWebhook),
    response: list('Webhook'),
  },
  {
    method: 'POST', path: '/api/v1/bases/{base_id}/webhooks', family: 'v1', tag: 'webhooks', status: 201,
    summary: 'Create a webhook; the answer alone carries its signing secret (whsec_...)',
    body: body(webhookBody, ['url', 'events']),
    document: `mutation CreateWebhook($baseId: ID!, $input: WebhookInput!) { createWebhook(baseId: $baseId, input: $input) { ${SELECT_WEBHOOK} secret } }`,
    variables: ({ params, body: b }) => ({ baseId: params.base_id, input: webhookInput(b) }),
    result: (d) => ({ ...restWebhook(d.createWebhook), secret: d.createWebhook.secret }),
    response: ref('WebhookWithSecret'),
  },
  {
    method: 'GET', path: '/api/v1/webhooks/{webhook_id}', family: 'v1', tag: 'webhooks', summary: 'One webhook',
    document: `query Webhook($id: ID!) { webhook(id: $id) { ${SELECT_WEBHOOK} } }`,
    variables: ({ params }) => ({ id: params.webhook_id }),
    result: (d) => restWebhook(d.webhook),
    response: ref('Webhook'),
  },
  {
    method: 'PUT', path: '/api/v1/webhooks/{webhook_id}', family: 'v1', tag: 'webhooks', summary: 'Change a webhook (url, events, table_id, enabled)',
    body: body(webhookBody),
    document: `mutation UpdateWebhook($id: ID!, $input: WebhookInput!) { updateWebhook(id: $id, input: $input) { ${SELECT_WEBHOOK} } }`,
    variables: ({ params, body: b }) => ({ id: params.webhook_id, input: webhookInput(b) }),
    result: (d) => restWebhook(d.updateWebhook),
    response: ref('Webhook'),
  },
  {
    method: 'DELETE', path: '/api/v1/webhooks/{webhook_id}', family: 'v1', tag: 'webhooks', summary: 'Delete a webhook and its delivery log',
    document: 'mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.webhook_id }),
    result: (d) => d.deleteWebhook,
    response: deleted,
  },
  {
    method: 'POST', path: '/api/v1/webhooks/{webhook_id}/test', family: 'v1', tag: 'webhooks',
    summary: 'Send a ping (an event of type "ping"); answers the queued delivery (409 while the webhook is disabled)',
    document: `mutation TestWebhook($id: ID!) { testWebhook(id: $id) { ${SELECT_DELIVERY} } }`,
    variables: ({ params }) => ({ id: params.webhook_id }),
    result: (d) => restDelivery(d.testWebhook),
    response: ref('WebhookDelivery'),
  },
  {
    method: 'GET', path: '/api/v1/webhooks/{webhook_id}/deliveries', family: 'v1', tag: 'webhooks', summary: 'The 100 newest deliveries, newest first',
    document: `query WebhookDeliveries($id: ID!) { webhookDeliveries(webhookId: $id) { ${SELECT_DELIVERY} } }`,
    variables: ({ params }) => ({ id: params.webhook_id }),
    result: (d) => d.webhookDeliveries.map(restDelivery),
    response: list('WebhookDelivery'),
  },
  {
    method: 'POST', path: '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', family: 'v1', tag: 'webhooks',
    summary: 'Queue a delivered or failed delivery again, as a new delivery of the same event (same webhook-id); 409 while pending',
    document: `mutation Redeliver($id: ID!, $deliveryId: ID!) { redeliverWebhookDelivery(webhookId: $id, deliveryId: $deliveryId) { ${SELECT_DELIVERY} } }`,
    variables: ({ params }) => ({ id: params.webhook_id, deliveryId: params.delivery_id }),
    result: (d) => restDelivery(d.redeliverWebhookDelivery),
    response: ref('WebhookDelivery'),
  },
];
