// The whole REST route table, in one list: the adapter, the OpenAPI generator and the tests all read it.
import type { Route } from '../route.js';
import { attachmentRoutes } from './attachments.routes.js';
import { authRoutes } from './auth.routes.js';
import { eventRoutes } from './events.routes.js';
import { jobRoutes, openJobRoutes } from './jobs.routes.js';
import { baseRoutes } from './bases.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import { openRoutes } from './open.routes.js';
import { pluginRoutes } from './plugins.routes.js';
import { recordRoutes } from './records.routes.js';
import { tableRoutes } from './tables.routes.js';
import { trashRoutes } from './trash.routes.js';
import { userRoutes } from './users.routes.js';
import { webhookRoutes } from './webhooks.routes.js';
import { workflowRoutes } from './workflows.routes.js';
import { viewRoutes } from './views.routes.js';

/** /api/v1, /api/auth and /api/plugins (v1 envelope). */
export const v1Routes: Route[] = [...authRoutes, ...userRoutes, ...baseRoutes, ...tableRoutes, ...recordRoutes, ...viewRoutes, ...eventRoutes, ...trashRoutes, ...attachmentRoutes, ...webhookRoutes, ...jobRoutes, ...workflowRoutes, ...pluginRoutes];
/** /api/oauth, discovery and /api/open/v1 (open envelope and the token endpoint). */
export const openApiRoutes: Route[] = [...oauthRoutes, ...openRoutes, ...openJobRoutes];
export const routes: Route[] = [...v1Routes, ...openApiRoutes];
