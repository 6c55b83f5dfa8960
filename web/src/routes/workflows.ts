// Routes of the workflow pages.
import type { RouteRecordRaw } from 'vue-router';

export const workflowRoutes: RouteRecordRaw[] = [];
