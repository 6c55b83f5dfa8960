// Webhooks of a base and their delivery log (contract section 14): base admins only.
import { DELIVERY_STATUSES, type Webhook as WebhookShape, type WebhookDelivery as DeliveryShape } from '../../src/domain/webhooks/index.js';
import { builder } from '../builder.js';
import { DeleteResult } from './common.js';

export const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', { values: DELIVERY_STATUSES });

export const Webhook = builder.objectRef<WebhookShape>('Webhook').implement({
  description: 'A URL that receives the events of a base (or of one table) as signed POSTs (Standard Webhooks)',
  fields: (t) => ({
    id: t.exposeID('id'),
    baseId: t.exposeID('baseId'),
    url: t.exposeString('url'),
    events: t.exposeStringList('events', { description: 'Event types, or "*" for all' }),
    tableId: t.exposeID('tableId', { nullable: true, description: 'Only events of this table; null for the whole base' }),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', { nullable: true, description: 'Why the service disabled it (failures in a row)' }),
    consecutiveFailures: t.exposeInt('consecutiveFailures', { description: 'Events in a row whose delivery failed (every attempt); 0 after a success' }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
    secret: t.string({
      nullable: true,
      description: 'The signing secret (whsec_...): only in the answer to createWebhook, null everywhere else',
      resolve: (w) => w.secret ?? null,
    }),
  }),
});

export const WebhookDelivery = builder.objectRef<DeliveryShape>('WebhookDelivery').implement({
  description: 'One event sent (or to send) to one webhook, with its attempts',
  fields: (t) => ({
    id: t.exposeID('id'),
    webhookId: t.exposeID('webhookId'),
    eventId: t.exposeID('eventId', { description: 'Sent as webhook-id, the same on every attempt and redelivery' }),
    eventType: t.exposeString('eventType'),
    status: t.expose('status', { type: WebhookDeliveryStatus }),
    attempts: t.exposeInt('attempts'),
    lastStatus: t.exposeInt('lastStatus', { nullable: true, description: 'HTTP status of the last attempt; null when none answered' }),
    lastError: t.exposeString('lastError', { nullable: true }),
    nextAttemptAt: t.exposeString('nextAttemptAt', { nullable: true }),
    createdAt: t.exposeString('createdAt'),
    deliveredAt: t.exposeString('deliveredAt', { nullable: true }),
  }),
});

const WebhookInput = builder.inputType('WebhookInput', {
  description: 'A new webhook (url and events required) or the keys of one to change',
  fields: (t) => ({
    url: t.string({ required: false, description: 'http(s); a private address is refused (PLUGIN_PROXY_ALLOW_PRIVATE aside)' }),
    events: t.stringList({ required: false, description: 'Event types (record.created, ...) or "*"' }),
    tableId: t.id({ required: false, description: 'Only events of this table of the base; null for every table' }),
    enabled: t.boolean({ required: false, description: 'Default true; enabling clears disabledReason and the failure count' }),
  }),
});

const admin = (ref: { baseId?: string; webhookId?: string }) => ({ baseRole: { ...ref, role: 'admin' as const } });

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [Webhook],
    description: 'Webhooks of a base (base admins)',
    args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ baseId: a.baseId }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.listWebhooks(a.baseId),
  }),
  webhook: t.field({
    type: Webhook,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.id }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.getWebhook(a.id),
  }),
  webhookDeliveries: t.field({
    type: [WebhookDelivery],
    description: 'The 100 newest deliveries of a webhook, newest first',
    args: { webhookId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.webhookId }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.listWebhookDeliveries(a.webhookId),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: Webhook,
    description: 'Creates a webhook; the answer alone carries its secret',
    args: { baseId: t.arg.id({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    authScopes: (_r, a) => admin({ baseId: a.baseId }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.createWebhook(a.baseId, a.input),
  }),
  updateWebhook: t.field({
    type: Webhook,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.id }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.updateWebhook(a.id, a.input),
  }),
  deleteWebhook: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.id }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.deleteWebhook(a.id),
  }),
  testWebhook: t.field({
    type: WebhookDelivery,
    description: 'Queues a ping (an event of type "ping") to the webhook; 409 while it is disabled',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.id }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.testWebhook(ctx.actor, a.id),
  }),
  redeliverWebhookDelivery: t.field({
    type: WebhookDelivery,
    description: 'Queues a delivered or failed delivery again, as a new delivery of the same event (same webhook-id)',
    args: { webhookId: t.arg.id({ required: true }), deliveryId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => admin({ webhookId: a.webhookId }),
    resolve: (_r, a, ctx) => ctx.services.webhooks.redeliverWebhookDelivery(a.webhookId, a.deliveryId),
  }),
}));
