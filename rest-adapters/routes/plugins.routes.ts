// /api/plugins: the plugin host management API (spec 3, 4.1) in the v1 envelope.
import { ref, type Route } from '../route.js';
import { body } from './common.js';

const PLUGIN = 'id name description author type version versions status consecutiveFailures permissions extensionPoints endpoints configSchema installation createdAt updatedAt';
const CONFIG = 'scope baseId config effective';

export const restPlugin = (p: Record<string, any>) => ({
  id: p.id, name: p.name, description: p.description, author: p.author, type: p.type, version: p.version,
  versions: p.versions.map((v: { version: string; uploadedAt: string }) => ({ version: v.version, uploaded_at: v.uploadedAt })),
  status: p.status, consecutive_failures: p.consecutiveFailures, permissions: p.permissions, extension_points: p.extensionPoints,
  endpoints: p.endpoints, config_schema: p.configSchema, created_at: p.createdAt, updated_at: p.updatedAt,
  ...(p.installation !== null && p.installation !== undefined ? { installation: p.installation } : {}),
});
const restConfig = (c: Record<string, any>) => ({ scope: c.scope, base_id: c.baseId, config: c.config, effective: c.effective });
const configQuery = {
  scope: { type: 'string' as const, description: 'global (default) or base' },
  base_id: { type: 'string' as const, description: 'The base, for scope=base' },
};
const P = '/api/plugins/{plugin_id}';

const restRunLog = (r: Record<string, any>) => ({
  run_id: r.runId, plugin_id: r.pluginId, version: r.version, kind: r.kind, endpoint: r.endpoint, base_id: r.baseId, user_id: r.userId,
  status: r.status, started_at: r.startedAt, finished_at: r.finishedAt, duration_ms: r.durationMs, result: r.result ?? null,
  error: r.error, traceback: r.traceback, logs: r.logs,
});

export const pluginRoutes: Route[] = [
  {
    method: 'POST', path: '/api/plugins/upload', family: 'v1', tag: 'plugins', status: 201, bodyFormat: 'upload', requireBeforeBody: 'systemAdmin',
    summary: 'Upload a .stplugin.zip (multipart "file" part or an application/zip body, at most 50 MiB): a new plugin (disabled) or a higher version',
    document: `mutation UploadPlugin($package: JSON) { uploadPlugin(package: $package) { ${PLUGIN} } }`,
    variables: ({ body: b }) => ({ package: b.file }),
    result: (d) => restPlugin(d.uploadPlugin),
    response: ref('Plugin'),
  },
  {
    method: 'GET', path: '/api/plugins', family: 'v1', tag: 'plugins', summary: 'Every plugin; with base_id, ui plugins carry their installation in that base',
    query: { base_id: { type: 'string', description: 'Show base-level state for this base' } },
    document: `query Plugins($baseId: ID) { plugins(baseId: $baseId) { ${PLUGIN} } }`,
    variables: ({ query }) => ({ baseId: query.base_id }),
    result: (d) => d.plugins.map(restPlugin),
    response: { type: 'array', items: ref('Plugin') },
  },
  {
    method: 'GET', path: P, family: 'v1', tag: 'plugins', summary: 'One plugin with its version history',
    query: { base_id: { type: 'string', description: 'Show base-level state for this base' } },
    document: `query Plugin($id: ID!, $baseId: ID) { plugin(id: $id, baseId: $baseId) { ${PLUGIN} } }`,
    variables: ({ params, query }) => ({ id: params.plugin_id, baseId: query.base_id }),
    result: (d) => restPlugin(d.plugin),
    response: ref('Plugin'),
  },
  {
    method: 'PUT', path: `${P}/status`, family: 'v1', tag: 'plugins', summary: 'enable, disable, or restore a plugin in error (system administrators)',
    body: body({ action: { enum: ['enable', 'disable', 'restore'] } }, ['action']),
    document: `mutation SetPluginStatus($id: ID!, $action: String!) { setPluginStatus(id: $id, action: $action) { ${PLUGIN} } }`,
    variables: ({ params, body: b }) => ({ id: params.plugin_id, action: b.action }),
    result: (d) => restPlugin(d.setPluginStatus),
    response: ref('Plugin'),
  },
  {
    method: 'POST', path: `${P}/rollback`, family: 'v1', tag: 'plugins', summary: 'Make a retained older version current (status, configuration and installations stay)',
    body: body({ version: { type: 'string' } }, ['version']),
    document: `mutation RollbackPlugin($id: ID!, $version: String) { rollbackPlugin(id: $id, version: $version) { ${PLUGIN} } }`,
    variables: ({ params, body: b }) => ({ id: params.plugin_id, version: b.version }),
    result: (d) => restPlugin(d.rollbackPlugin),
    response: ref('Plugin'),
  },
  {
    method: 'DELETE', path: P, family: 'v1', tag: 'plugins', summary: 'Uninstall a plugin with every version, its configuration, installations and storage',
    document: 'mutation UninstallPlugin($id: ID!) { uninstallPlugin(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.plugin_id }),
    result: (d) => d.uninstallPlugin,
    response: { $ref: '#/components/schemas/Deleted' },
  },
  {
    method: 'GET', path: `${P}/config`, family: 'v1', tag: 'plugins', summary: 'Configuration of a scope and the effective configuration',
    query: configQuery,
    document: `query PluginConfig($id: ID!, $scope: PluginConfigScope, $baseId: ID) { pluginConfig(id: $id, scope: $scope, baseId: $baseId) { ${CONFIG} } }`,
    variables: ({ params, query }) => ({ id: params.plugin_id, scope: query.scope, baseId: query.base_id }),
    result: (d) => restConfig(d.pluginConfig),
    response: ref('PluginConfig'),
  },
  {
    method: 'PUT', path: `${P}/config`, family: 'v1', tag: 'plugins', summary: 'Save the configuration of a scope, validated against configSchema (400 INVALID_CONFIG)',
    query: configQuery,
    body: body({ config: { type: 'object' } }, ['config']),
    document: `mutation SetPluginConfig($id: ID!, $scope: PluginConfigScope, $baseId: ID, $config: JSON) { setPluginConfig(id: $id, scope: $scope, baseId: $baseId, config: $config) { ${CONFIG} } }`,
    variables: ({ params, query, body: b }) => ({ id: params.plugin_id, scope: query.scope, baseId: query.base_id, config: b.config }),
    result: (d) => restConfig(d.setPluginConfig),
    response: ref('PluginConfig'),
  },
  {
    method: 'POST', path: `${P}/installations`, family: 'v1', tag: 'plugins', status: 201, summary: 'Install and enable a ui plugin in a base (400 for a script plugin)',
    body: body({ base_id: { type: 'string' } }, ['base_id']),
    document: `mutation InstallPlugin($id: ID!, $baseId: ID!) { installPlugin(id: $id, baseId: $baseId) { ${PLUGIN} } }`,
    variables: ({ params, body: b }) => ({ id: params.plugin_id, baseId: b.base_id }),
    result: (d) => restPlugin(d.installPlugin),
    response: ref('Plugin'),
  },
  {
    method: 'PUT', path: `${P}/installations`, family: 'v1', tag: 'plugins', summary: 'Enable or disable a ui plugin in a base',
    body: body({ base_id: { type: 'string' }, enabled: { type: 'boolean' } }, ['base_id', 'enabled']),
    document: `mutation SetPluginInstallation($id: ID!, $baseId: ID!, $enabled: Boolean!) { setPluginInstallation(id: $id, baseId: $baseId, enabled: $enabled) { ${PLUGIN} } }`,
    variables: ({ params, body: b }) => ({ id: params.plugin_id, baseId: b.base_id, enabled: b.enabled }),
    result: (d) => restPlugin(d.setPluginInstallation),
    response: ref('Plugin'),
  },
  {
    method: 'DELETE', path: `${P}/installations`, family: 'v1', tag: 'plugins', summary: 'Remove a ui plugin from a base',
    query: { base_id: { type: 'string', description: 'The base', required: true } },
    document: `mutation RemovePluginInstallation($id: ID!, $baseId: ID!) { removePluginInstallation(id: $id, baseId: $baseId) { ${PLUGIN} } }`,
    variables: ({ params, query }) => ({ id: params.plugin_id, baseId: query.base_id }),
    result: (d) => restPlugin(d.removePluginInstallation),
    response: ref('Plugin'),
  },
  {
    method: 'POST', path: `${P}/rpc`, family: 'v1', tag: 'plugins', summary: 'A data call of a ui plugin, relayed by the browser host and checked here',
    body: body({ base_id: { type: 'string' }, table_id: { type: 'string' }, method: { type: 'string' }, params: { type: ['object', 'null'] }, handshake_token: { type: 'string' } }, ['base_id', 'method']),
    document: 'mutation PluginRpc($id: ID!, $baseId: ID!, $tableId: ID, $method: String!, $params: JSON, $handshakeToken: String) { pluginRpc(id: $id, baseId: $baseId, tableId: $tableId, method: $method, params: $params, handshakeToken: $handshakeToken) }',
    variables: ({ params, body: b }) => ({ id: params.plugin_id, baseId: b.base_id, tableId: b.table_id, method: b.method, params: b.params, handshakeToken: b.handshake_token }),
    result: (d) => ({ result: d.pluginRpc ?? null }),
    response: { type: 'object', properties: { result: {} }, required: ['result'] },
  },
  {
    method: 'POST', path: `${P}/run`, family: 'v1', tag: 'plugins',
    summary: 'Run a script plugin and wait for its end (editors and above); a timeout is status failed with an error starting TIMEOUT',
    body: body({ base_id: { type: 'string' }, table_id: { type: ['string', 'null'] }, params: { type: ['object', 'null'] } }, ['base_id']),
    document: 'mutation RunPlugin($id: ID!, $baseId: ID!, $tableId: ID, $params: JSON) { runPlugin(id: $id, baseId: $baseId, tableId: $tableId, params: $params) { runId status result error logs } }',
    variables: ({ params, body: b }) => ({ id: params.plugin_id, baseId: b.base_id, tableId: b.table_id, params: b.params }),
    result: (d) => ({ run_id: d.runPlugin.runId, status: d.runPlugin.status, result: d.runPlugin.result ?? null, error: d.runPlugin.error, logs: d.runPlugin.logs }),
    response: ref('PluginRun'),
  },
  {
    method: 'POST', path: `${P}/call/{endpoint}`, family: 'v1', tag: 'plugins',
    summary: 'Run a declared custom endpoint (404 ENDPOINT_NOT_DECLARED otherwise; 504 TIMEOUT; 502 ENDPOINT_FAILED)',
    body: body({ base_id: { type: 'string' }, payload: {} }, ['base_id']),
    document: 'mutation CallPluginEndpoint($id: ID!, $endpoint: String!, $baseId: ID!, $payload: JSON) { callPluginEndpoint(id: $id, endpoint: $endpoint, baseId: $baseId, payload: $payload) }',
    variables: ({ params, body: b }) => ({ id: params.plugin_id, endpoint: params.endpoint, baseId: b.base_id, payload: b.payload }),
    result: (d) => ({ result: d.callPluginEndpoint?.result ?? null }),
    response: { type: 'object', properties: { result: {} }, required: ['result'], additionalProperties: false },
  },
  {
    method: 'GET', path: `${P}/run-logs`, family: 'v1', tag: 'plugins', summary: 'Runs and calls, newest first (base admins with base_id; system administrators for all bases)',
    query: { base_id: { type: 'string', description: 'Runs in this base' }, page: { type: 'integer', description: 'Page (default 1)' }, page_size: { type: 'integer', description: 'Entries per page (default 20, at most 200)' } },
    document: 'query PluginRunLogs($id: ID!, $baseId: ID, $page: Int, $pageSize: Int) { pluginRunLogs(id: $id, baseId: $baseId, page: $page, pageSize: $pageSize) { items { runId pluginId version kind endpoint baseId userId status startedAt finishedAt durationMs result error traceback logs } total page pageSize } }',
    variables: ({ params, query }) => ({ id: params.plugin_id, baseId: query.base_id, page: query.page, pageSize: query.page_size }),
    result: (d) => ({ items: d.pluginRunLogs.items.map(restRunLog), total: d.pluginRunLogs.total, page: d.pluginRunLogs.page, page_size: d.pluginRunLogs.pageSize }),
    response: { type: 'object', properties: { items: { type: 'array', items: ref('PluginRunLog') }, total: { type: 'integer' }, page: { type: 'integer' }, page_size: { type: 'integer' } }, required: ['items', 'total', 'page', 'page_size'], additionalProperties: false },
  },
  {
    method: 'POST', path: `${P}/proxy`, family: 'v1', tag: 'plugins', summary: 'network.fetch: a request to a domain of the plugin\'s allow-list',
    body: body({
      base_id: { type: 'string' }, url: { type: 'string' }, method: { type: 'string' }, headers: { type: 'object' },
      body: { type: ['string', 'null'] }, body_encoding: { enum: ['text', 'base64'] },
    }, ['base_id', 'url']),
    document: 'mutation PluginProxy($id: ID!, $baseId: ID!, $request: PluginProxyRequest!) { pluginProxy(id: $id, baseId: $baseId, request: $request) { status headers body bodyEncoding } }',
    variables: ({ params, body: b }) => ({
      id: params.plugin_id, baseId: b.base_id, request: { url: b.url, method: b.method, headers: b.headers, body: b.body, bodyEncoding: b.body_encoding },
    }),
    result: (d) => ({ status: d.pluginProxy.status, headers: d.pluginProxy.headers, body: d.pluginProxy.body, body_encoding: d.pluginProxy.bodyEncoding }),
    response: ref('ProxyAnswer'),
  },
  {
    method: 'POST', path: `${P}/sandbox-url`, family: 'v1', tag: 'plugins', summary: 'A signed loader URL for one opening of a ui plugin (10 minutes)',
    body: body({
      base_id: { type: 'string' }, table_id: { type: ['string', 'null'] }, record_id: { type: ['string', 'null'] },
      extension_point: { type: 'string' }, selection: { type: ['object', 'null'] },
    }, ['base_id', 'extension_point']),
    document: 'mutation PluginSandboxUrl($id: ID!, $baseId: ID!, $tableId: ID, $recordId: ID, $extensionPoint: String!, $selection: JSON) { pluginSandboxUrl(id: $id, baseId: $baseId, tableId: $tableId, recordId: $recordId, extensionPoint: $extensionPoint, selection: $selection) { url expiresAt handshakeToken context permissions } }',
    variables: ({ params, body: b }) => ({ id: params.plugin_id, baseId: b.base_id, tableId: b.table_id, recordId: b.record_id, extensionPoint: b.extension_point, selection: b.selection }),
    result: (d) => ({ url: d.pluginSandboxUrl.url, expires_at: d.pluginSandboxUrl.expiresAt, handshake_token: d.pluginSandboxUrl.handshakeToken, context: d.pluginSandboxUrl.context, permissions: d.pluginSandboxUrl.permissions }),
    response: ref('SandboxUrl'),
  },
];
