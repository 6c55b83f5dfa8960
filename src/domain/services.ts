// Builds every domain service from the shared dependencies; the GraphQL context carries the result.
import { createAccess } from './access.js';
import { createActivityMonitor } from './activity.js';
import { createAppService } from './apps.js';
import { createAppRateLimits } from './app-rate-limits.js';
import { createAuditLog } from './audit.js';
import { createAuthService, type LoginThrottle } from './auth.js';
import { createBaseService } from './bases.js';
import type { Deps } from './deps.js';
import { createComputedEngine } from './computed/recompute.js';
import { createEventLog } from './events.js';
import { createExportService } from './exports.js';
import { createImportService } from './imports/index.js';
import { createJobService } from './jobs.js';
import { createAttachmentService } from './attachments.js';
import { attachmentUrls } from '../fields/types/attachment.js';
import { createFieldService } from './fields.js';
import { createIdempotency } from './idempotency.js';
import { createOpenApiService } from './open-api.js';
import { createPluginRunService, createPluginService } from './plugins/index.js';
import { createRecordService } from './records.js';
import { createSearchIndexer } from './search-indexer.js';
import { createTableService } from './tables.js';
import { createTrash } from './trash.js';
import { createUserService } from './users.js';
import { createViewService } from './views.js';
import { createShareService } from './shares.js';
import { createDeliveryQueue, createWebhookService } from './webhooks/index.js';
import { createWorkflowService } from './workflows.js';

/** `throttle`: the login throttle app.ts chose for the engine (the in-process one when absent). */
export function createServices(deps: Deps, opts: { throttle?: LoginThrottle } = {}) {
  const access = createAccess(deps);
  const bases = createBaseService(deps, access);
  const users = createUserService(deps, bases);
  const audit = createAuditLog(deps);
  const apps = createAppService(deps, audit);
  const auth = createAuthService(deps, users, apps, opts.throttle);
  const appLimits = createAppRateLimits(apps, deps.limiter);
  let search: ReturnType<typeof createSearchIndexer> | undefined;
  const computed = createComputedEngine(deps);
  const events = createEventLog(deps);
  const fields = createFieldService(deps, computed, events, (tableId) => search?.touch(tableId));
  const activity = createActivityMonitor();
  search = createSearchIndexer(deps, fields.loadFields, activity);
  const views = createViewService(deps, access, fields, events);
  const tables = createTableService(deps, access, bases, fields, events, views);
  const trash = createTrash(deps, tables, fields, computed, events, () => records);
  const records = createRecordService(deps, tables, fields, search, computed, events, trash);
  const openApi = createOpenApiService(deps, apps, audit, fields, records);
  const workflows = createWorkflowService(deps, bases, fields, records);
  const plugins = createPluginService(deps, {
    access, hostVersion: deps.config.version, signer: deps.signer, fetch: deps.fetch, limiter: deps.limiter,
    proxyRatePerMinute: deps.config.proxyRatePerMinute,
  });
  const idempotency = createIdempotency(deps);
  const jobs = createJobService(deps, access);
  const imports = createImportService(deps, { records, fields, tables, jobs });
  const exports = createExportService(deps, { tables, fields, views });
  const shares = createShareService(deps, { views, records, fields });
  const webhookQueue = createDeliveryQueue(deps, events);
  const webhooks = createWebhookService(deps, webhookQueue);
  const attachments = createAttachmentService(deps);
  // Field types have no dependencies: the attachment type signs its URLs with this process's key through this hook.
  attachmentUrls.value = (stored) => attachments.apiValue(stored as Parameters<typeof attachments.apiValue>[0]);
  return { attachments, views, shares, trash, jobs, imports, exports, deps, webhooks, webhookQueue, keys: deps.keys, activity, idempotency, search, computed, events, access, users, auth, audit, apps, appLimits, bases, fields, tables, records, openApi, workflows, plugins, pluginRuns: createPluginRunService(deps, plugins) };
}

export type Services = ReturnType<typeof createServices>;
