// Routes of the data pages: login, bases, tables (owned by the core pages).
import type { RouteRecordRaw } from 'vue-router';

export const coreRoutes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: () => import('../pages/LoginPage.vue'), meta: { public: true, layout: 'bare' } },
  { path: '/', name: 'home', component: () => import('../pages/HomePage.vue') },
  { path: '/bases/:baseId', name: 'base', component: () => import('../pages/BasePage.vue'), props: true },
  { path: '/bases/:baseId/tables/:tableId', name: 'table', component: () => import('../pages/TablePage.vue'), props: true, meta: { layout: 'full' } },
  { path: '/share/:shareId', name: 'share', component: () => import('../pages/SharePage.vue'), props: true, meta: { public: true, layout: 'bare' } },
  { path: '/:pathMatch(.*)*', name: 'not-found', component: () => import('../pages/NotFoundPage.vue') },
];
