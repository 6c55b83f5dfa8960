// Routes of the webhook pages: the webhooks of a base with their deliveries.
import type { RouteRecordRaw } from 'vue-router';

export const webhookRoutes: RouteRecordRaw[] = [
  { path: '/bases/:baseId/webhooks', name: 'webhooks', component: () => import('../pages/webhooks/WebhooksPage.vue'), props: true, meta: { title: 'Webhooks' } },
];
