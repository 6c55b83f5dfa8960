// Plugins: packages and versions, status, configuration, base installations, RPC, the network proxy and sandbox URLs.
import type { PluginView } from '../../src/domain/plugins.js';
import { builder } from '../builder.js';
import { pluginGateway } from '../plugin-gateway.js';
import type { RunLogEntry } from '../../src/domain/plugin-runs.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

const Plugin = builder.objectRef<PluginView>('Plugin').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    author: t.field({ type: 'JSON', resolve: (p) => p.author }),
    type: t.exposeString('type'),
    version: t.exposeString('version'),
    versions: t.field({ type: 'JSON', description: '[{version, uploadedAt}], highest first', resolve: (p) => p.versions }),
    status: t.exposeString('status'),
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

const PluginConfig = builder.objectRef<{ scope: string; baseId: string | null; config: unknown; effective: unknown }>('PluginConfig').implement({
  fields: (t) => ({
    scope: t.exposeString('scope'),
    baseId: t.exposeString('baseId', { nullable: true }),
    config: t.field({ type: 'JSON', resolve: (c) => c.config }),
    effective: t.field({ type: 'JSON', description: 'Base configuration deep-merged over global', resolve: (c) => c.effective }),
  }),
});

const SandboxUrl = builder.objectRef<{ url: string; expiresAt: string; handshakeToken: string; context: unknown; permissions: unknown }>('SandboxUrl').implement({
  fields: (t) => ({
    url: t.exposeString('url'),
    expiresAt: t.exposeString('expiresAt'),
    handshakeToken: t.exposeString('handshakeToken', { description: 'The per-open token the host bridge expects in every message' }),
    context: t.field({ type: 'JSON', description: 'What the handshake passes to the plugin', resolve: (s) => s.context }),
    permissions: t.field({ type: 'JSON', resolve: (s) => s.permissions }),
  }),
});

const ProxyAnswer = builder.objectRef<{ status: number; headers: unknown; body: string; bodyEncoding: string }>('ProxyAnswer').implement({
  fields: (t) => ({
    status: t.exposeInt('status'),
    headers: t.field({ type: 'JSON', resolve: (a) => a.headers }),
    body: t.exposeString('body'),
    bodyEncoding: t.exposeString('bodyEncoding'),
  }),
});

const RunResult = builder.objectRef<{ runId: string; status: string; result: unknown; error: string | null; logs: string[] }>('PluginRunResult').implement({
  fields: (t) => ({
    runId: t.exposeID('runId'),
    status: t.exposeString('status'),
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
    kind: t.exposeString('kind'),
    endpoint: t.exposeString('endpoint', { nullable: true }),
    baseId: t.exposeID('baseId'),
    userId: t.exposeID('userId'),
    status: t.exposeString('status'),
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

const configScopes = (a: { scope?: string | null; baseId?: string | number | null }) =>
  a.scope === 'base' && a.baseId ? { baseRole: { baseId: String(a.baseId), role: 'admin' as const } } : { systemAdmin: true };

builder.queryFields((t) => ({
  plugins: t.field({
    type: [Plugin],
    description: 'Every plugin; with baseId each ui plugin carries its installation in that base',
    args: { baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => (a.baseId ? { baseRole: { baseId: String(a.baseId), role: 'viewer' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.plugins.listPlugins(a.baseId ? String(a.baseId) : null),
  }),
  plugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => (a.baseId ? { baseRole: { baseId: String(a.baseId), role: 'viewer' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.plugins.getPlugin(String(a.id), a.baseId ? String(a.baseId) : null),
  }),
  pluginRunLogs: t.field({
    type: RunLogPage,
    description: 'Runs and endpoint calls, newest first: of one base (base admins) or of every base (system administrators)',
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => (a.baseId ? { baseRole: { baseId: String(a.baseId), role: 'admin' } } : { systemAdmin: true }),
    resolve: (_r, a, ctx) => ctx.services.pluginRuns.listRunLogs(String(a.id), a.baseId ? String(a.baseId) : null, a.page, a.pageSize),
  }),
  pluginConfig: t.field({
    type: PluginConfig,
    args: { id: t.arg.id({ required: true }), scope: t.arg.string({ required: false }), baseId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => configScopes(a),
    resolve: (_r, a, ctx) => ctx.services.plugins.getConfig(String(a.id), a.scope ?? 'global', a.baseId ? String(a.baseId) : null),
  }),
}));

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
    args: { id: t.arg.id({ required: true }), action: t.arg.string({ required: true }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.setStatus(String(a.id), a.action),
  }),
  rollbackPlugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), version: t.arg.string({ required: false }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.rollback(String(a.id), a.version),
  }),
  uninstallPlugin: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: { systemAdmin: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.uninstallPlugin(String(a.id)),
  }),
  setPluginConfig: t.field({
    type: PluginConfig,
    args: { id: t.arg.id({ required: true }), scope: t.arg.string({ required: false }), baseId: t.arg.id({ required: false }), config: t.arg({ type: 'JSON', required: false }) },
    authScopes: (_r, a) => configScopes(a),
    resolve: (_r, a, ctx) => ctx.services.plugins.putConfig(String(a.id), a.scope ?? 'global', a.baseId ? String(a.baseId) : null, a.config),
  }),
  installPlugin: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.installPlugin(String(a.id), String(a.baseId)),
  }),
  setPluginInstallation: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }), enabled: t.arg({ type: 'JSON', required: false }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.setInstallation(String(a.id), String(a.baseId), a.enabled),
  }),
  removePluginInstallation: t.field({
    type: Plugin,
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.plugins.removeInstallation(String(a.id), String(a.baseId)),
  }),
  pluginRpc: t.field({
    type: 'JSON',
    nullable: true,
    description: 'A data call of a ui plugin, checked and run as the calling user',
    args: {
      id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), tableId: t.arg.id({ required: false }),
      method: t.arg.string({ required: false }), params: t.arg({ type: 'JSON', required: false }), handshakeToken: t.arg.string({ required: false }),
    },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx, info) => ctx.services.plugins.rpc(ctx.actor!, pluginGateway(info.schema, ctx), String(a.id), a),
  }),
  runPlugin: t.field({
    type: RunResult,
    description: 'Runs a script plugin in the sandbox and waits for the end (editors and above)',
    args: { id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), tableId: t.arg.id({ required: false }), params: t.arg({ type: 'JSON', required: false }) },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx, info) => ctx.services.pluginRuns.runPlugin(ctx.actor!, pluginGateway(info.schema, ctx), String(a.id), a),
  }),
  callPluginEndpoint: t.field({
    type: 'JSON',
    nullable: true,
    description: 'Runs a declared custom endpoint; answers {result}',
    args: { id: t.arg.id({ required: true }), endpoint: t.arg.string({ required: true }), baseId: t.arg.id({ required: false }), payload: t.arg({ type: 'JSON', required: false }) },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx, info) => ctx.services.pluginRuns.callEndpoint(ctx.actor!, pluginGateway(info.schema, ctx), String(a.id), a.endpoint, a),
  }),
  pluginProxy: t.field({
    type: ProxyAnswer,
    args: {
      id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), url: t.arg({ type: 'JSON', required: false }),
      method: t.arg({ type: 'JSON', required: false }), headers: t.arg({ type: 'JSON', required: false }), body: t.arg({ type: 'JSON', required: false }),
      bodyEncoding: t.arg.string({ required: false }),
    },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.proxy(ctx.actor!, String(a.id), a),
  }),
  pluginSandboxUrl: t.field({
    type: SandboxUrl,
    args: {
      id: t.arg.id({ required: true }), baseId: t.arg.id({ required: false }), tableId: t.arg.id({ required: false }), recordId: t.arg.id({ required: false }),
      extensionPoint: t.arg.string({ required: false }), selection: t.arg({ type: 'JSON', required: false }),
    },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx) => ctx.services.plugins.sandboxUrl(ctx.actor!, String(a.id), a),
  }),
}));
