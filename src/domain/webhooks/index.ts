// Webhooks (contract section 14): the service the schema calls, the queue the event log fills and the delivery worker.
export { createDeliveryQueue, type DeliveryQueue } from './queue.js';
export { createWebhookService, type WebhookInput, type WebhookService } from './service.js';
export { createWebhookWorker, type WebhookWorker } from './worker.js';
export { DELIVERY_STATUSES, type DeliveryStatus, type Webhook, type WebhookDelivery } from './shapes.js';
