// Builds the whole service from a configuration: database, keys, services, GraphQL and the REST route table.
// Tests build it the same way and call `fetch` without a socket; main.ts puts it on a port.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import type { Config } from './config.js';
import { forbidden, unauthorized } from './errors.js';
import { atLeast } from './domain/access.js';
import { DB_FILE, openSqliteStore } from './db/sqlite-store.js';
import { openPgStore, type PgStore } from './db/pg-store.js';
import { createPgLoginThrottle, createPgRateLimiter } from './db/pg-limits.js';
import { loadOrCreateKeys } from './auth/keys.js';
import { createTokenService } from './auth/tokens.js';
import { createRevocationList } from './auth/revocations.js';
import { createServices } from './domain/services.js';
import { schema } from '../schema/index.js';
import type { Context } from '../schema/context.js';
import { classifyError, createRestHandler } from '../rest-adapters/adapter.js';
import { families, json, jsonText, v1Error } from '../rest-adapters/envelopes.js';
import { openApiRoutes, routes, v1Routes } from '../rest-adapters/routes/index.js';
import { openSchemas } from '../rest-adapters/schemas.js';
import { createRateLimiter } from './auth/rate-limit.js';
import { createLoginThrottle } from './auth/login-throttle.js';
import { createUrlSigner, loadOrCreateUrlKey } from './auth/url-signer.js';
import { createWorkflowRunner } from './domain/workflow-runner.js';
import { createJobRunner } from './domain/job-runner.js';
import type { ExportPlan } from './domain/exports.js';
import { createSpool } from '../rest-adapters/spool.js';
import { startRunUpkeep } from './domain/interrupted-runs.js';
import { createWebhookWorker } from './domain/webhooks/index.js';
import { createGuardedFetch } from './net/ssrf-guard.js';
import { buildOpenApi } from '../rest-adapters/openapi.js';
import { limitGraphqlBody } from './graphql/body-limit.js';
import { createGraphqlFastPath } from './graphql/fast-path.js';
import { withEventIds } from './graphql/sse-event-ids.js';
import { useCompiledOperations } from './graphql/use-compiled-operations.js';
import { useHttpStatusExtension } from './graphql/use-http-status-extension.js';
import { useInternalErrorLog } from './graphql/use-internal-error-log.js';
import { createPluginServer } from '../plugins-runtime/serve.js';
import { sandboxStatus } from '../plugins-runtime/python/runner.js';
import { workflowScriptRunner } from '../schema/plugin-gateway.js';
import { createWebServer } from './web-static.js';
import { createApiDocs } from './api-docs.js';
import { ATTACHMENT_OPENAPI_PATHS, createAttachmentHttp } from './attachment-http.js';
import { referencedAttachments } from './domain/attachment-values.js';
import { createLogger, logRequest, type Logger, type RequestState } from './log.js';
import { createMetrics } from './metrics.js';
import { chargeApplication, useApplicationLimits } from '../schema/application-limits.js';

/** Where the generated first administrator's password is written (contract 0), readable by its owner only. */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export interface AppOptions {
  /** Where log lines go; without it nothing is logged (tests), main.ts passes stdout's. */
  log?: Logger;
}

export async function createApp(config: Config, options: AppOptions = {}) {
  const log = options.log ?? createLogger('silent');
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = config.databaseUrl
    ? await openPgStore(config.databaseUrl)
    : openSqliteStore(path.join(config.dataDir, DB_FILE), { synchronous: config.sqliteSynchronous });
  const keys = await loadOrCreateKeys(store);
  const tokens = createTokenService(keys, config.publicUrl);
  const revocations = await createRevocationList(store);
  const fetch = createGuardedFetch({ allowPrivate: config.proxyAllowPrivate, timeoutMs: config.proxyTimeoutMs, maxBytes: config.proxyMaxBytes });
  const signer = createUrlSigner(await loadOrCreateUrlKey(store));
  // Several processes may serve one PostgreSQL database: there the limits and the login throttle count in it, for all.
  const shared = store.engine === 'postgres' ? (store as PgStore).pool : undefined;
  const limiter = shared ? createPgRateLimiter(shared) : createRateLimiter();
  const throttle = shared ? createPgLoginThrottle(shared) : createLoginThrottle();
  const services = createServices({ store, keys, tokens, revocations, config, fetch, signer, limiter }, { throttle });
  const firstAdmin = await services.users.ensureFirstAdmin(config.adminEmail, config.adminPassword);
  if (firstAdmin?.password) {
    // Contract 0: the generated password goes to a file only its owner can read, never to a log line.
    fs.writeFileSync(path.join(config.dataDir, INITIAL_PASSWORD_FILE), `${firstAdmin.password}\n`, { mode: 0o600, flag: 'w' });
    fs.chmodSync(path.join(config.dataDir, INITIAL_PASSWORD_FILE), 0o600);
  }
  await services.pluginRuns.failInterrupted();
  const sandbox = sandboxStatus();
  const runner = createWorkflowRunner({
    store, workflows: services.workflows, records: services.records, fields: services.fields, fetch,
    sinceActivity: services.activity.sinceLastRequest,
    // run_script steps run as the workflow: the script's data calls pass the same scope checks as a user's, with the
    // workflow's reach (editor of its own table's base, nothing else).
    runScript: workflowScriptRunner(schema, services),
    leaseMs: config.workflowLeaseMs,
  });
  await runner.start();
  const stopRunUpkeep = startRunUpkeep(store, config.workflowLeaseMs);
  // Webhook deliveries: their own guarded fetch (the webhook timeout; a receiver's answer is not kept, so 1 MiB will do).
  const deliveries = createWebhookWorker({
    store, queue: services.webhookQueue, schedule: config.webhookRetryScheduleMs, timeoutMs: config.webhookTimeoutMs,
    fetch: createGuardedFetch({ allowPrivate: config.proxyAllowPrivate, timeoutMs: config.webhookTimeoutMs, maxBytes: 1024 * 1024 }),
    userAgent: `table-service-webhooks/${config.version}`, sinceActivity: services.activity.sinceLastRequest,
  });
  deliveries.start();
  // Imports run off the request, one at a time per process, with the workflow runs' lease rule.
  const jobRunner = createJobRunner({
    store, jobs: services.jobs, importer: services.imports.importer, sinceActivity: services.activity.sinceLastRequest, leaseMs: config.workflowLeaseMs,
  });
  await jobRunner.start();
  services.computed.resumeFills();
  // The event log keeps EVENT_RETENTION_DAYS, and so does the webhook delivery log; the trash TRASH_RETENTION_DAYS: pruned at start and hourly.
  const pruneEvents = () => {
    void services.events.prune().catch((e) => log.error({ err: e }, 'pruning the event log failed'));
    void services.webhooks.prune().catch((e) => log.error({ err: e }, 'pruning the webhook delivery log failed'));
    void services.trash.prune().catch((e) => log.error({ err: e }, 'pruning the trash failed'));
  };
  pruneEvents();
  const eventPruning = setInterval(pruneEvents, 3_600_000).unref();
  // Attachment files no record refers to, uploaded over an hour ago, are removed at start and hourly (contract 16).
  const sweepFiles = () => void services.attachments.sweep((ids) => referencedAttachments(store, services.fields.loadFields, ids))
    .catch((e) => log.error({ err: e }, 'sweeping attachment files failed'));
  sweepFiles();
  const fileSweeping = setInterval(sweepFiles, 3_600_000).unref();
  services.search.touchAll((await store.db.select({ id: store.schema.tables.id }).from(store.schema.tables)).map((t) => t.id));

  // One context per /graphql request: when the fast path hands a request on to yoga, yoga's context is the one it built
  // (the token is verified once; a refusal of it is the same refusal). REST builds its own, once.
  const contexts = new WeakMap<RequestState, Promise<Context>>();
  function contextFor(request: Request, requestState: RequestState): Promise<Context> {
    let context = contexts.get(requestState);
    if (!context) contexts.set(requestState, (context = buildContext(request, requestState)));
    return context;
  }
  async function buildContext(request: Request, requestState: RequestState): Promise<Context> {
    const actor = await services.auth.actorFromHeader(request.headers.get('authorization'));
    requestState.actorId = actor?.id;
    return { actor, services, requestId: requestState.requestId, clientAddress: requestState.clientAddress, requestState, lastEventId: request.headers.get('last-event-id'), signal: request.signal };
  }

  /** The caller's address: the socket's peer, or behind a trusted reverse proxy the last hop of X-Forwarded-For. */
  function clientAddressOf(request: Request, socketAddress: string | undefined): string {
    if (config.trustProxy) {
      const hops = (request.headers.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (hops.length) return hops[hops.length - 1];
    }
    return socketAddress ?? 'local';
  }

  const graphqlFastPath = createGraphqlFastPath(contextFor);
  const yoga = createYoga<{ requestState: RequestState }>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    // The body's size is checked in front of yoga (limitGraphqlBody), at less cost.
    maxRequestBodySize: false,
    // GraphiQL (still on for browser GETs) from our own assets: yoga's default page loads it from a CDN.
    renderGraphiQL: () => docs.renderGraphiQL(),
    plugins: [useCompiledOperations(graphqlFastPath), useHttpStatusExtension(), useApplicationLimits(), useInternalErrorLog()],
    context: ({ request, requestState }) => contextFor(request, requestState),
    maskedErrors: {
      maskError(error) {
        const e = classifyError(error);
        if (e.code !== 'INTERNAL_ERROR') return error as Error;
        // The cause rides along (not serialised) so the access line can log it; see useInternalErrorLog.
        return new GraphQLError('Internal error', { originalError: e.cause as Error, extensions: { code: 'INTERNAL_ERROR', http: { status: 500 } } });
      },
    },
  });

  const rest = createRestHandler<Context>({
    schema,
    routes,
    families,
    // Routes that take no bearer token (the token endpoint's Authorization is HTTP Basic) have no caller.
    context: (request, requestState, route) =>
      route.auth === false
        ? Promise.resolve({ actor: null, services, requestId: requestState.requestId, clientAddress: requestState.clientAddress, requestState })
        : buildContext(request, requestState),
    beforeBody: (route, document, ctx, params) => {
      const need = route.requireBeforeBody;
      if (need === 'systemAdmin' && !(ctx.actor?.kind === 'user' && ctx.actor.isAdmin)) {
        throw ctx.actor ? forbidden() : unauthorized();
      }
      // Any signed-in user may upload an attachment; the file is theirs to put into records they may edit.
      if (need === 'user' && ctx.actor?.kind !== 'user') throw ctx.actor ? forbidden('Attachments are uploaded by users') : unauthorized();
      if (typeof need === 'object') return requireRole(ctx, need.role, need.param === 'table_id' ? { tableId: params.table_id } : { baseId: params.base_id });
      // The Open API's answers carry RateLimit-* (contract 6); the same charge applies at /graphql (useApplicationLimits).
      if (route.family === 'open' && route.path.startsWith('/api/open/')) return chargeApplication(ctx, schema, document);
    },
    // Idempotency-Key (contract section 14): writes under /api/v1 and /api/open/v1, kept per actor (a user, or an
    // application whatever its token); every route there takes a bearer token, so there is always an actor.
    idempotency: {
      appliesTo: (route) => route.method !== 'GET' && (route.path.startsWith('/api/v1/') || route.path.startsWith('/api/open/v1/')),
      begin: (ctx, key, fingerprint) => ctx.actor ? services.idempotency.begin(`${ctx.actor.kind}:${ctx.actor.id}`, key, fingerprint) : undefined,
    },
    spools: {
      imports: createSpool(services.imports.importer.spoolDir, config.importMaxBytes),
      attachments: createSpool(services.attachments.incomingDir, config.attachmentMaxBytes, 'ATTACHMENT_MAX_BYTES'),
    },
    // Exports stream the file the operation's plan names (contract section 15): a header row, then slices of records.
    download: (_ctx, plan) => {
      const p = plan as ExportPlan;
      return new Response(services.exports.stream(p), {
        headers: {
          'content-type': p.contentType, 'cache-control': 'no-store',
          'content-disposition': `attachment; filename="${p.fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(p.fileName).replace(/'/g, '%27')}`,
        },
      });
    },
  });
  /** An import's role check, before its body is read: 401 without a user, 404 for a missing table or base, else 403. */
  async function requireRole(ctx: Context, role: 'editor' | 'admin', ref: { tableId?: string; baseId?: string }): Promise<void> {
    if (ctx.actor?.kind !== 'user') throw ctx.actor ? forbidden() : unauthorized();
    const have = await services.access.roleIn(ctx.actor, await services.access.baseOf(ref));
    if (!atLeast(have, role)) throw forbidden(`Importing needs the ${role} role in the base`);
  }
  const v1Document = buildOpenApi(v1Routes, { title: 'Table Service API v1', version: config.version, serverUrl: config.publicUrl });
  Object.assign(v1Document.paths, ATTACHMENT_OPENAPI_PATHS);
  const openApiV1 = JSON.stringify(v1Document);
  const openApiOpen = JSON.stringify(buildOpenApi(openApiRoutes, {
    title: 'Table Service Open API and OAuth', version: config.version, serverUrl: config.publicUrl, schemas: openSchemas,
  }));
  const pluginServer = createPluginServer(services.plugins);
  const attachmentHttp = createAttachmentHttp(services.attachments);
  const web = createWebServer();
  const docs = createApiDocs();

  // Only counted when someone can read them: without METRICS_TOKEN there is no registry, no timers and no cost per request.
  const metricsToken = config.metricsToken ? Buffer.from(`Bearer ${config.metricsToken}`) : undefined;
  const metrics = metricsToken && createMetrics({
    queueDepths: async () => ({ workflow_runs: await runner.queueDepth(), webhook_deliveries: await deliveries.queueDepth(), jobs: await jobRunner.queueDepth() }),
    databaseBytes: () => store.sizeBytes(),
  });

  async function handle(request: Request, url: URL, state: RequestState): Promise<Response> {
    const { requestId } = state;
    const p = url.pathname;
    if (p === '/healthz') {
      state.route = p;
      try {
        await store.ping();
      } catch {
        return json(503, { status: 'unavailable', version: config.version, database: 'unavailable', sandbox: sandbox.isolation }, requestId);
      }
      return json(200, { status: 'ok', version: config.version, database: 'ok', sandbox: sandbox.isolation }, requestId);
    }
    if (p === '/metrics') {
      state.route = p;
      if (!metricsToken || !metrics) return json(404, v1Error(404, 'NOT_FOUND', 'Metrics are off: set METRICS_TOKEN to turn them on', requestId), requestId);
      const given = Buffer.from(request.headers.get('authorization') ?? '');
      if (given.length !== metricsToken.length || !timingSafeEqual(given, metricsToken)) {
        return json(401, v1Error(401, 'UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', requestId), requestId, { 'www-authenticate': 'Bearer' });
      }
      return new Response(await metrics.text(), { headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' } });
    }
    if (p === '/graphql') {
      state.route = p;
      const limited = await limitGraphqlBody(request);
      if ('tooLarge' in limited) return limited.tooLarge;
      const fast = await graphqlFastPath.run(limited.request, state);
      return 'answer' in fast ? fast.answer : withEventIds(await yoga.fetch(fast.request, { requestState: state }));
    }
    if (p === '/api/v1/openapi.json' || p === '/api/open/v1/openapi.json') {
      state.route = p;
      return jsonText(200, p === '/api/v1/openapi.json' ? openApiV1 : openApiOpen, requestId);
    }
    if (p === '/api/docs' || p.startsWith('/api/docs/')) {
      const page = docs.handle(request, url);
      if (page) {
        state.route = p.startsWith('/api/docs/assets/') ? '/api/docs/assets/{file}' : '/api/docs';
        return page;
      }
    }
    if (p.startsWith('/api/plugins/')) {
      const sandbox = request.method === 'GET' ? await pluginServer.handle(url) : undefined;
      if (sandbox) {
        state.route = '/api/plugins/{plugin_id}/sandbox';
        return sandbox;
      }
    }
    if (p.startsWith('/api/v1/attachments/')) {
      const answer = await attachmentHttp.handle(request, url, state);
      if (answer) return answer;
    }
    if (p.startsWith('/api/v1/') || p.startsWith('/api/auth/') || p.startsWith('/api/plugins') || p.startsWith('/api/share/')) return rest.handle(request, url, state, 'v1');
    if (p === '/api/oauth/token') return rest.handle(request, url, state, 'token');
    if (p.startsWith('/api/open/') || p.startsWith('/api/oauth/') || p.startsWith('/.well-known/')) return rest.handle(request, url, state, 'open');
    if (!p.startsWith('/api/')) {
      const page = web.handle(request, url);
      if (page) {
        state.route = '/{web app}';
        return page;
      }
    }
    return json(404, v1Error(404, 'NOT_FOUND', `Nothing at ${p}`, requestId), requestId);
  }

  return {
    config,
    services,
    store,
    /** The SQLite write connection, for tests that inspect the file (absent on PostgreSQL). */
    sqlite: 'sqlite' in store ? store.sqlite : undefined,
    firstAdmin,
    runner,
    /** The webhook delivery worker. */
    deliveries,
    jobRunner,
    /** Whether script plugins run under OS isolation (bubblewrap) or only the in-Python layers. */
    sandbox,
    routes: rest.compiled,
    /** The /graphql fast path (src/graphql/fast-path.ts), whose count tests read. */
    graphqlFastPath,
    /** Answers one request; `socketAddress` is the peer's address when it came over a socket. Every request is one log line. */
    async fetch(request: Request, socketAddress?: string): Promise<Response> {
      const started = performance.now();
      services.activity.noteRequest();
      store.requestArrived();
      // While requests are in flight, SQLite groups their commits (sqlite-store.ts).
      try {
        const incoming = request.headers.get('x-request-id');
        const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
        const state: RequestState = { requestId, clientAddress: clientAddressOf(request, socketAddress) };
        let response: Response;
        try {
          response = await handle(request, new URL(request.url), state);
          if (!response.headers.has('x-request-id')) response.headers.set('x-request-id', requestId);
          if (state.headers) for (const [k, v] of Object.entries(state.headers)) response.headers.set(k, v);
        } catch (error) {
          const e = classifyError(error);
          if (e.cause) state.error = e.cause;
          response = json(e.status, v1Error(e.status, e.code, e.message, requestId), requestId);
        }
        const ms = performance.now() - started;
        logRequest(log, state, request.method, response.status, ms);
        metrics?.observe(state.route, request.method, response.status, ms / 1000);
        return response;
      } finally {
        store.requestFinished();
      }
    },
    /** Stops the workflow runner and the webhook worker (finishing what is in progress) and closes the database. */
    async close() {
      stopRunUpkeep();
      clearInterval(eventPruning);
      clearInterval(fileSweeping);
      await jobRunner.stop();
      await Promise.all([runner.stop(), deliveries.stop()]);
      await services.search.stop();
      await services.computed.stop();
      await services.idempotency.flush();
      await store.close();
    },
  };
}

export type App = Awaited<ReturnType<typeof createApp>>;
