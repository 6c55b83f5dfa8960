// The web app's routes, gathered from one module per area; pages other than login need a signed-in user.
import { createRouter, createWebHistory } from 'vue-router';
import { session } from './api';
import { adminRoutes } from './routes/admin';
import { coreRoutes } from './routes/core';
import { trashRoutes } from './routes/trash';
import { webhookRoutes } from './routes/webhooks';
import { workflowRoutes } from './routes/workflows';

export const router = createRouter({
  history: createWebHistory(),
  routes: [...coreRoutes, ...workflowRoutes, ...webhookRoutes, ...trashRoutes, ...adminRoutes],
});

router.beforeEach((to) => {
  if (to.meta.public) return true;
  if (!session.user) return { name: 'login', query: { next: to.fullPath } };
  if (to.meta.admin && !session.user.isAdmin) return { name: 'home' };
  return true;
});
