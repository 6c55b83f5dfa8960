// Routes of the administration pages: users, OAuth applications, plugins (system administrators only).
import type { RouteRecordRaw } from 'vue-router';

const admin = { admin: true } as const;

export const adminRoutes: RouteRecordRaw[] = [
  {
    path: '/admin',
    component: () => import('../pages/admin/AdminLayout.vue'),
    meta: admin,
    children: [
      { path: '', name: 'admin', redirect: { name: 'admin-users' }, meta: admin },
      { path: 'users', name: 'admin-users', component: () => import('../pages/admin/UsersPage.vue'), meta: { ...admin, title: 'Users' } },
      { path: 'apps', name: 'admin-apps', component: () => import('../pages/admin/AppsPage.vue'), meta: { ...admin, title: 'OAuth applications' } },
      { path: 'apps/:appId', name: 'admin-app', component: () => import('../pages/admin/AppDetailPage.vue'), props: true, meta: { ...admin, title: 'OAuth application' } },
      { path: 'plugins', name: 'admin-plugins', component: () => import('../pages/admin/PluginsPage.vue'), meta: { ...admin, title: 'Plugins' } },
      { path: 'plugins/:pluginId', name: 'admin-plugin', component: () => import('../pages/admin/PluginDetailPage.vue'), props: true, meta: { ...admin, title: 'Plugin' } },
    ],
  },
];
