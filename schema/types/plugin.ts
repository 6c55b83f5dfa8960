// Plugins: packages and versions, status, configuration, base installations, RPC, runs, the network proxy and sandbox URLs.
import type { Role } from '../../src/domain/access.js';
import type {
  ConfigAnswer, PluginView, ProxyAnswer as ProxyAnswerShape, RunAnswer, RunLogEntry, SandboxUrl as SandboxUrlShape,
} from '../../src/domain/plugins/index.js';
import { builder } from '../builder.js';
import { pluginGateway, scriptCaller } from '../plugin-gateway.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

const PluginType = builder.enumType('PluginType', { description: 'ui (runs in the browser sandbox) or script (Python on the server)', values: ['ui', 'script'] as const });
const PluginStatus = builder.enumType('PluginStatus', {
  description: 'disabled after a first upload; error after five failed runs or calls in a row (it keeps working)',
  values: ['enabled', 'disabled', 'error'] as const,
});
const PluginConfigScope = builder.enumType('PluginConfigScope', { description: 'global, or a base override merged over it', values: ['global', 'base'] as const });
const PluginRunKind = builder.enumType('PluginRunKind', { description: 'a script run, or a custom endpoint call', values: ['run', 'call'] as const });
const PluginRunStatus = builder.enumType('PluginRunStatus', { values: ['running', 'completed', 'failed'] as const });
const ProxyBodyEncoding = builder.enumType('ProxyBodyEncoding', { description: 'How a proxied body travels: text, or base64 for bytes', values: ['text', 'base64'] as const });

const Plugin = builder.objectRef<PluginView>('Plugin').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    author: t.field({ type: 'JSON', resolve: (p) => p.author }),
    type: t.expose('type', { type: PluginType }),
    version: t.exposeString('version'),
    versions: t.field({ type: 'JSON', description: '[{version, uploadedAt}], highest first', resolve: (p) => p.versions }),
    status: t.expose('status', { type: PluginStatus }),
    consecutiveFailures: t.exposeInt('consecutiveFailures'),
    permissions: t.field({ type: 'JSON', resolve: (p) => p.permissions }),
    extensionPoints: t.field({ type: 'JSON', resolve: (p) => p.extensionPoints }),
    endpoints: t.field({ type: 'JSON', resolve: (p) => p.endpoints }),
    configSchema: t.field({ type: 'JSON', nullable: true, resolve: (p) => p.configSchema }),
    installation: t.field({ type: 'JSON', nullable: true, description: '{installed, enabled} in the base asked for (ui plugins)', resolve: (p) => p.installation ?? null }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});

const PluginConfig = builder.objectRef<ConfigAnswer>('PluginConfig').implement({
  fields: (t) => ({
    scope: t.expose('scope', { type: PluginConfigScope }),
    baseId: t.exposeString('baseId', { nullable: true }),
    config: t.field({ type: 'JSON', resolve: (c) => c.config }),
    effective: t.field({ type: 'JSON', description: 'Base configuration deep-merged over global', resolve: (c) => c.effective }),
  }),
});

const SandboxUrl = builder.objectRef<SandboxUrlShape>('SandboxUrl').implement({
  fields: (t) => ({
    url: t.exposeString('url'),
    expiresAt: t.exposeString('expiresAt'),
    handshakeToken: t.exposeString('handshakeToken', { description: 'The per-open token the host bridge expects in every message' }),
    context: t.field({ type: 'JSON', description: 'What the handshake passes to the plugin', resolve: (s) => s.context }),
    permissions: t.field({ type: 'JSON', resolve: (s) => s.permissions }),
  }),
});

const ProxyAnswer = builder.objectRef<ProxyAnswerShape>('ProxyAnswer').implement({
  fields: (t) => ({
    status: t.exposeInt('status'),
    headers: t.field({ type: 'JSON', resolve: (a) => a.headers }),
    body: t.exposeString('body'),
    bodyEncoding: t.expose('bodyEncoding', { type: ProxyBodyEncoding }),
  }),
});

const ProxyRequest = builder.inputType('PluginProxyRequest', {
  description: "network.fetch: a request to a host of the plugin's permissions.network",
  fields: (t) => ({
    url: t.string({ required: true }),
    method: t.string({ required: false, description: 'GET (default), POST, PUT, PATCH, DELETE, HEAD or OPTIONS' }),
    // A map of header names, which GraphQL has no type for: the service checks that every value is a string.
    headers: t.field({ type: 'JSON', required: false, description: 'Header names to string values' }),
    body: t.string({ required: false }),
    bodyEncoding: t.field({ type: ProxyBodyEncoding, required: false }),
  }),
});

const RunResult = builder.objectRef<RunAnswer>('PluginRunResult').implement({
  fields: (t) => ({
    runId: t.exposeID('runId'),
    status: t.expose('status', { type: PluginRunStatus }),
    result: t.field({ type: 'JSON', nullable: true, resolve: (r) => r.result }),
    error: t.exposeString('error', { nullable: true }),
    logs: t.exposeStringList('logs'),
  }),
});

const RunLog = builder.objectRef<RunLogEntry>('PluginRunLog').implement({
  fields: (t) => ({
    runId: t.exposeID('runId'),
    pluginId: t.exposeID('pluginId'),
    version: t.exposeString('version'),
    kind: t.expose('kind', { type: PluginRunKind }),
    endpoint: t.exposeString('endpoint', { nullable: true }),
    baseId: t.exposeID('baseId'),
    userId: t.exposeID('userId'),
    status: t.expose('status', { type: PluginRunStatus }),
    startedAt: t.exposeString('startedAt'),
    finishedAt: t.exposeString('finishedAt', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    result: t.field({ type: 'JSON', nullable: true, resolve: (r) => r.result }),
    error: t.exposeString('error', { nullable: true }),
    traceback: t.exposeString('traceback', { nullable: true }),
    logs: t.exposeStringList('logs'),
  }),
});
const RunLogPage = pageOf<RunLogEntry>('PluginRunLog', RunLog);

/** A role in the base when one is named, else the fallback scope. */
const inBaseOr = (baseId: string | null | undefined, role: Role, fallback: { loggedIn: true } | { systemAdmin: true }) =>
  (baseId ? { baseRole: { baseId, role } } : fallback);
/** Global configuration is the system administrators'; a base override its base administrators'. */
const configScopes = (a: { scope?: 'global' | 'base' | null; baseId?: string | null }) =>
  inBaseOr(a.scope === 'base' ? a.baseId : null, 'admin', { systemAdmin: true });

builder.queryFields((t) => ({
  plugins: t.field({
    type: [Plugin],
    description: 'Every plugin; with baseId each ui plugin carries its installation in that base',
    args: { baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => inBaseOr(a.baseId, 'viewer', { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.plugins.listPlugins(a.baseId || null),
  }),
  plugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => inBaseOr(a.baseId, 'viewer', { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.plugins.getPlugin(a.id, a.baseId || null),
  }),
  pluginRunLogs: t.field({
    type: RunLogPage,
    description: 'Runs and endpoint calls, newest first: of one base (base admins) or of every base (system administrators)',
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => inBaseOr(a.baseId, 'admin', { systemAdmin: true }),
    resolve: (_r, a, ctx) => ctx.services.pluginRuns.listRunLogs(a.id, a.baseId || null, a.page, a.pageSize),
  }),
  pluginConfig: t.field({
    type: PluginConfig,
    args: { id: t.arg.id({ required: true }), scope: t.arg({ type: PluginConfigScope, required: false }), baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => configScopes(a),
    resolve: (_r, a, ctx) => ctx.services.plugins.getConfig(a.id, a.scope ?? 'global', a.baseId || null),
  }),
}));

// Every plugin permission is a scope (builder.ts, checks in schema/plugin-gateway.ts) listed in the order it applies, so
// resolvers call the plugin service only once they have passed.
builder.mutationFields((t) => ({
  uploadPlugin: t.field({
    type: Plugin,
    description: 'Uploads a .stplugin.zip (base64 over /graphql): a new plugin, or a higher version of one',
    args: { package: t.arg({ type: 'JSON', required: false, description: 'The package bytes (base64 over HTTP)' }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.uploadPlugin(a.package),
  }),
  setPluginStatus: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), action: t.arg.string({ required: true, description: 'enable, disable, or restore (from error)' }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.setStatus(a.id, a.action),
  }),
  rollbackPlugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), version: t.arg.string({ required: false }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.rollback(a.id, a.version),
  }),
  uninstallPlugin: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.uninstallPlugin(a.id),
  }),
  setPluginConfig: t.field({
    type: PluginConfig,
    args: {
      id: t.arg.id({ required: true }), scope: t.arg({ type: PluginConfigScope, required: false }), baseId: t.arg.id({ required: false }),
      config: t.arg({ type: 'JSON', required: false, description: "An object matching the plugin's configSchema" }),
    },
    authScopes: (_r, a) => configScopes(a),
    resolve: (_r, a, ctx) => ctx.services.plugins.putConfig(a.id, a.scope ?? 'global', a.baseId || null, a.config),
  }),
  installPlugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.installPlugin(a.id, a.baseId),
  }),
  setPluginInstallation: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), enabled: t.arg.boolean({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.setInstallation(a.id, a.baseId, a.enabled),
  }),
  removePluginInstallation: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.removeInstallation(a.id, a.baseId),
  }),
  pluginRpc: t.field({
    type: 'JSON',
    nullable: true,
    description: 'A data call of a ui plugin, checked and run as the calling user',
    args: {
      id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), tableId: t.arg.id({ required: false }),
      method: t.arg.string({ required: true }), params: t.arg({ type: 'JSON', required: false }), handshakeToken: t.arg.string({ required: false }),
    },
    // Contract section 7, in order: enabled, installed and enabled in the base, the method's permission, the role.
    authScopes: (_r, a) => ({
      $all: {
        loggedIn: true, pluginEnabled: a.id, pluginInstalled: { pluginId: a.id, baseId: a.baseId },
        pluginMethod: { pluginId: a.id, baseId: a.baseId, method: a.method },
      },
    }),
    resolve: (_r, a, ctx, info) => ctx.services.plugins.rpc(pluginGateway(info.schema, ctx), a.id, a),
  }),
  runPlugin: t.field({
    type: RunResult,
    description: 'Runs a script plugin in the sandbox and waits for the end (editors and above)',
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), tableId: t.arg.id({ required: false }), params: t.arg({ type: 'JSON', required: false }) },
    authScopes: (_r, a) => ({
      $all: {
        loggedIn: true, pluginEnabled: a.id,
        pluginBaseRole: { baseId: a.baseId, role: 'editor', message: `Running a script plugin needs the editor role in base ${a.baseId}` },
      },
    }),
    resolve: async (_r, a, ctx, info) => ctx.services.pluginRuns.runPlugin(await scriptCaller(info.schema, ctx, a.id, a.baseId), a.id, a),
  }),
  callPluginEndpoint: t.field({
    type: 'JSON',
    nullable: true,
    description: 'Runs a declared custom endpoint (any member of the base); answers {result}',
    args: { id: t.arg.id({ required: true }), endpoint: t.arg.string({ required: true }), baseId: t.arg.id({ required: true }), payload: t.arg({ type: 'JSON', required: false }) },
    authScopes: (_r, a) => ({
      $all: {
        loggedIn: true, pluginEnabled: a.id, pluginEndpoint: { pluginId: a.id, endpoint: a.endpoint },
        pluginBaseRole: { baseId: a.baseId, role: 'viewer' }, pluginInstalled: { pluginId: a.id, baseId: a.baseId },
      },
    }),
    resolve: async (_r, a, ctx, info) => ctx.services.pluginRuns.callEndpoint(await scriptCaller(info.schema, ctx, a.id, a.baseId), a.id, a.endpoint, a),
  }),
  pluginProxy: t.field({
    type: ProxyAnswer,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), request: t.arg({ type: ProxyRequest, required: true }) },
    authScopes: (_r, a) => ({
      $all: {
        loggedIn: true, pluginEnabled: a.id, pluginBaseRole: { baseId: a.baseId, role: 'viewer' },
        pluginInstalled: { pluginId: a.id, baseId: a.baseId }, pluginNetwork: { pluginId: a.id, url: a.request.url },
      },
    }),
    resolve: (_r, a, ctx) => ctx.services.plugins.proxy(a.id, a.request),
  }),
  pluginSandboxUrl: t.field({
    type: SandboxUrl,
    args: {
      id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), tableId: t.arg.id({ required: false }), recordId: t.arg.id({ required: false }),
      extensionPoint: t.arg.string({ required: true }), selection: t.arg({ type: 'JSON', required: false, description: '{recordIds, total, selectAll, scope, at}: ids only, at most 1000 kept' }),
    },
    authScopes: (_r, a) => ({
      $all: {
        loggedIn: true, pluginEnabled: a.id, pluginUi: a.id, pluginBaseRole: { baseId: a.baseId, role: 'viewer' },
        pluginInstalled: { pluginId: a.id, baseId: a.baseId },
      },
    }),
    resolve: (_r, a, ctx) => ctx.services.plugins.sandboxUrl(a.id, a),
  }),
}));
