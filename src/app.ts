// Builds the whole service from a configuration: database, keys, services, GraphQL and the REST route table.
// Tests build it the same way and call `fetch` without a socket; main.ts puts it on a port.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import type { Config } from './config.js';
import { forbidden, unauthorized } from './errors.js';
import { openDatabase } from './db/connection.js';
import { createRecordStore } from './db/record-store.js';
import { loadOrCreateKeys } from './auth/keys.js';
import { createTokenService } from './auth/tokens.js';
import { createRevocationList } from './auth/revocations.js';
import { createServices } from './domain/services.js';
import { schema } from '../schema/index.js';
import type { Context } from '../schema/context.js';
import { classifyError, createRestHandler } from '../rest-adapters/adapter.js';
import { families, json } from '../rest-adapters/envelopes.js';
import { openApiRoutes, routes, v1Routes } from '../rest-adapters/routes/index.js';
import { createOpenRateLimit } from '../rest-adapters/open-rate-limit.js';
import { openSchemas } from '../rest-adapters/schemas.js';
import { createRateLimiter } from './auth/rate-limit.js';
import { createUrlSigner, loadOrCreateUrlKey } from './auth/url-signer.js';
import { createWorkflowRunner } from './domain/workflow-runner.js';
import { createGuardedFetch } from './net/ssrf-guard.js';
import { buildOpenApi } from '../rest-adapters/openapi.js';
import { useHttpStatusExtension } from './graphql/use-http-status-extension.js';
import { createPluginServer } from '../plugins-runtime/serve.js';
import { sandboxStatus } from '../plugins-runtime/python/runner.js';
import { pluginGateway } from '../schema/plugin-gateway.js';
import { createWebServer } from './web-static.js';
import type { UserActor } from './domain/deps.js';

export const DB_FILE = 'table-service.db';
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export async function createApp(config: Config) {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const { sqlite, orm } = openDatabase(path.join(config.dataDir, DB_FILE), { synchronous: config.sqliteSynchronous });
  const keys = await loadOrCreateKeys(config.dataDir);
  const tokens = createTokenService(keys, config.publicUrl);
  const revocations = createRevocationList(sqlite);
  const store = createRecordStore(sqlite);
  const fetch = createGuardedFetch({ allowPrivate: config.proxyAllowPrivate, timeoutMs: config.proxyTimeoutMs, maxBytes: config.proxyMaxBytes });
  const signer = createUrlSigner(loadOrCreateUrlKey(config.dataDir));
  const limiter = createRateLimiter();
  const services = createServices({ sqlite, orm, store, keys, tokens, revocations, config, fetch, signer, limiter });
  const firstAdmin = await services.users.ensureFirstAdmin(config.adminEmail, config.adminPassword);
  services.pluginRuns.failInterrupted();
  const sandbox = sandboxStatus();
  const runner = createWorkflowRunner({
    sqlite, workflows: services.workflows, records: services.records, fields: services.fields, fetch,
    sinceActivity: services.activity.sinceLastRequest,
    // run_script steps run as the workflow, with the owner's reach inside the base of the workflow's table.
    runScript: (pluginId, params, { tableId, recordId, workflowId }) => {
      const actor: UserActor = { kind: 'user', id: workflowId, isAdmin: true, email: '', name: `workflow ${workflowId}`, jti: '', exp: 0 };
      const gateway = pluginGateway(schema, { actor, services, requestId: workflowId });
      const baseId = services.tables.loadTable(tableId).baseId;
      return services.pluginRuns.runForWorkflow(gateway, actor, pluginId, baseId, tableId, recordId, params);
    },
  });
  runner.start();
  services.search.touchAll(sqlite.prepare('SELECT id FROM tables').pluck().all() as string[]);

  async function contextFor(request: Request, requestId: string): Promise<Context> {
    const actor = await services.auth.actorFromHeader(request.headers.get('authorization'));
    return { actor, services, requestId };
  }

  const yoga = createYoga<{ requestId: string }>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    plugins: [useHttpStatusExtension()],
    context: ({ request, requestId }) => contextFor(request, requestId),
    maskedErrors: {
      maskError(error) {
        const e = classifyError(error);
        if (e.code !== 'INTERNAL_ERROR') return error as Error;
        return new GraphQLError('Internal error', { extensions: { code: 'INTERNAL_ERROR', http: { status: 500 } } });
      },
    },
  });

  const openRateLimit = createOpenRateLimit(services.apps, limiter);
  const rest = createRestHandler<Context>({
    schema,
    routes,
    families,
    // Routes that take no bearer token (the token endpoint's Authorization is HTTP Basic) have no caller.
    context: (request, requestId, route) => (route.auth === false ? Promise.resolve({ actor: null, services, requestId }) : contextFor(request, requestId)),
    around: (route, ctx, run, headers) => {
      // Only a system administrator may make the server read a 50 MiB upload.
      if (route.bodyFormat === 'upload' && !(ctx.actor?.kind === 'user' && ctx.actor.isAdmin)) {
        throw ctx.actor ? forbidden() : unauthorized();
      }
      return openRateLimit(route, ctx, run, headers);
    },
  });
  const openApiV1 = JSON.stringify(buildOpenApi(v1Routes, { title: 'Table Service API v1', version: config.version, serverUrl: config.publicUrl }));
  const openApiOpen = JSON.stringify(buildOpenApi(openApiRoutes, {
    title: 'Table Service Open API and OAuth', version: config.version, serverUrl: config.publicUrl, schemas: openSchemas,
  }));
  const pluginServer = createPluginServer(services.plugins);
  const web = createWebServer();
  const jsonDoc = (text: string, requestId: string) =>
    new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId } });

  async function handle(request: Request, requestId: string): Promise<Response> {
    const url = new URL(request.url);
    const p = url.pathname;
    if (p === '/healthz') return json(200, { status: 'ok', version: config.version, sandbox: sandbox.isolation }, requestId);
    if (p === '/graphql') return yoga.fetch(request, { requestId });
    if (p === '/api/v1/openapi.json') return jsonDoc(openApiV1, requestId);
    if (p === '/api/open/v1/openapi.json') return jsonDoc(openApiOpen, requestId);
    if (p.startsWith('/api/plugins/')) {
      const sandbox = request.method === 'GET' ? pluginServer.handle(url) : undefined;
      if (sandbox) return sandbox;
    }
    if (p.startsWith('/api/v1/') || p.startsWith('/api/auth/') || p.startsWith('/api/plugins')) return rest.handle(request, url, requestId, 'v1');
    if (p === '/api/oauth/token') return rest.handle(request, url, requestId, 'token');
    if (p.startsWith('/api/open/') || p.startsWith('/api/oauth/') || p.startsWith('/.well-known/')) return rest.handle(request, url, requestId, 'open');
    if (!p.startsWith('/api/')) {
      const page = web.handle(request, url);
      if (page) return page;
    }
    return json(404, { code: 404, msg: `Nothing at ${p}`, error: 'NOT_FOUND', data: null, request_id: requestId }, requestId);
  }

  return {
    config,
    services,
    sqlite,
    firstAdmin,
    runner,
    /** Whether script plugins run under OS isolation (bubblewrap) or only the in-Python layers. */
    sandbox,
    routes: rest.compiled,
    async fetch(request: Request): Promise<Response> {
      services.activity.noteRequest();
      const incoming = request.headers.get('x-request-id');
      const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      try {
        const response = await handle(request, requestId);
        if (!response.headers.has('x-request-id')) response.headers.set('x-request-id', requestId);
        return response;
      } catch (error) {
        const e = classifyError(error);
        return json(e.status, { code: e.status, msg: e.message, error: e.code, data: null, request_id: requestId }, requestId);
      }
    },
    /** Stops the workflow runner (finishing runs in progress) and closes the database. */
    async close() {
      await runner.stop();
      services.search.stop();
      sqlite.close();
    },
  };
}

export type App = Awaited<ReturnType<typeof createApp>>;
