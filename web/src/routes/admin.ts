// Routes of the administration pages: users, OAuth applications, plugins.
import type { RouteRecordRaw } from 'vue-router';

export const adminRoutes: RouteRecordRaw[] = [];
