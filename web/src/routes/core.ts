// Routes of the data pages: login, bases, tables (owned by the core pages).
import type { RouteRecordRaw } from 'vue-router';

export const coreRoutes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: () => import('../pages/LoginPage.vue'), meta: { public: true } },
  { path: '/', name: 'home', component: () => import('../pages/HomePage.vue') },
];
