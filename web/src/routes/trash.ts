// Route of the trash page of a base.
import type { RouteRecordRaw } from 'vue-router';

export const trashRoutes: RouteRecordRaw[] = [
  { path: '/bases/:baseId/trash', name: 'trash', component: () => import('../pages/trash/TrashPage.vue'), props: true, meta: { title: 'Trash' } },
];
