// Routes of the workflow pages: the workflows of a base, and one workflow's editor, runs and logs.
import type { RouteRecordRaw } from 'vue-router';

export const workflowRoutes: RouteRecordRaw[] = [
  { path: '/bases/:baseId/workflows', name: 'workflows', component: () => import('../pages/workflows/WorkflowsPage.vue'), props: true, meta: { title: 'Workflows' } },
  { path: '/bases/:baseId/workflows/:workflowId', name: 'workflow', component: () => import('../pages/workflows/WorkflowPage.vue'), props: true, meta: { title: 'Workflow' } },
];
