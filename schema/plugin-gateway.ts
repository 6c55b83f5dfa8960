// What a plugin may do as its caller: the checks behind the plugin scopes, and its data calls as GraphQL operations.
import type { GraphQLSchema } from 'graphql';
import { AppError, badRequest } from '../src/errors.js';
import { atLeast, type Role } from '../src/domain/access.js';
import type { WorkflowActor } from '../src/domain/deps.js';
import type { ScriptRunner } from '../src/domain/workflow-runner.js';
import type { Services } from '../src/domain/services.js';
import {
  hostAllowed, isDataMethod, proxyTarget, type DataCallGuard, type DataMethod, type PluginDataGateway, type ScriptCaller,
} from '../src/domain/plugins/index.js';
import type { Permissions } from '../plugins-runtime/manifest.js';
import type { Context } from './context.js';
import { runOperation } from './run-operation.js';

// The plugin scopes (registered in builder.ts) decide every plugin permission of contract section 7, each throwing its
// own code, in the order a field lists them. The gateway's operations are scope-checked as the context's actor: the
// calling user, or the workflow of a run_script step (an editor of its own base only).

/** The declared permission and the minimum role in the base each data method needs (spec 3, 4.2). */
const METHOD_RULES: Record<DataMethod, { permission?: (p: Permissions | undefined) => boolean; role: Role }> = {
  'ui.getContext': { role: 'viewer' },
  'selection.get': { role: 'viewer' },
  'config.get': { role: 'viewer' },
  'storage.get': { permission: (p) => p?.storage === true, role: 'viewer' },
  'storage.set': { permission: (p) => p?.storage === true, role: 'editor' },
  'storage.remove': { permission: (p) => p?.storage === true, role: 'editor' },
  'table.getSchema': { permission: (p) => !!p?.tables, role: 'viewer' },
  'table.listTables': { permission: (p) => !!p?.tables, role: 'viewer' },
  'table.getRecords': { permission: (p) => !!p?.records, role: 'viewer' },
  'table.getRecord': { permission: (p) => !!p?.records, role: 'viewer' },
  'record.create': { permission: (p) => p?.records === 'write', role: 'editor' },
  'record.update': { permission: (p) => p?.records === 'write', role: 'editor' },
  'record.delete': { permission: (p) => p?.records === 'write', role: 'editor' },
};

/** A role the caller needs in a base; the message says what it is for (default: being a member). */
export interface PluginRoleScope { baseId: string; role: Role; message?: string }
export interface PluginBaseScope { pluginId: string; baseId: string }
export interface PluginMethodScope { pluginId: string; baseId: string; method: string }
export interface PluginEndpointScope { pluginId: string; endpoint: string }
export interface PluginNetworkScope { pluginId: string; url: string }

const denied = (message: string) => new AppError('PERMISSION_DENIED', message);

/** The base a plugin call names: an empty id names none (the same 400 as every other missing base_id). */
async function existingBase(ctx: Context, baseId: string): Promise<string> {
  if (!baseId) throw badRequest('base_id is required', [{ field: 'base_id', message: 'required' }]);
  return ctx.services.access.baseOf({ baseId });
}

/** The caller's role in an existing base (404 for a missing one); null for a stranger or no caller. */
async function roleIn(ctx: Context, baseId: string): Promise<Role | null> {
  await existingBase(ctx, baseId);
  return ctx.actor ? ctx.services.access.roleIn(ctx.actor, baseId) : null;
}

/** A data method must exist, its permission be declared by the plugin, and the caller hold its role, in that order. */
async function checkMethod(ctx: Context, { pluginId, baseId, method }: PluginMethodScope, role: Role | null): Promise<void> {
  if (!isDataMethod(method)) {
    if (method === 'network.fetch') throw denied('network.fetch goes through POST /api/plugins/{id}/proxy');
    throw new AppError('METHOD_NOT_FOUND', `Unknown method ${JSON.stringify(method)}`);
  }
  const rule = METHOD_RULES[method];
  if (rule.permission && !rule.permission((await ctx.services.plugins.current(pluginId)).manifest.permissions)) {
    throw denied(`${method} needs a permission that plugin ${pluginId} does not declare`);
  }
  if (!atLeast(role, rule.role)) throw denied(`${method} needs the ${rule.role} role in base ${baseId}`);
}

/** The plugin scopes' loaders for one request: each passes or throws the contract's error. */
export function pluginScopes(ctx: Context) {
  const { plugins } = ctx.services;
  return {
    /** The plugin exists (404) and is not disabled (PLUGIN_DISABLED); a plugin in error keeps working. */
    pluginEnabled: async (pluginId: string) => {
      if ((await plugins.current(pluginId)).row.status === 'disabled') throw new AppError('PLUGIN_DISABLED', `Plugin ${pluginId} is disabled`);
      return true;
    },
    /** Only a ui plugin has a sandbox to open. */
    pluginUi: async (pluginId: string) => {
      if ((await plugins.current(pluginId)).row.type !== 'ui') throw badRequest(`Plugin ${pluginId} is a script plugin and has no user interface`);
      return true;
    },
    /** Only a declared endpoint may be called (404, before any membership check: manifests are no secret). */
    pluginEndpoint: async ({ pluginId, endpoint }: PluginEndpointScope) => {
      if (!((await plugins.current(pluginId)).manifest.endpoints ?? []).some((e) => e.name === endpoint)) {
        throw new AppError('ENDPOINT_NOT_DECLARED', `Plugin ${pluginId} declares no endpoint "${endpoint}"`);
      }
      return true;
    },
    /** The caller's role in the base (404 for a missing base). */
    pluginBaseRole: async ({ baseId, role, message }: PluginRoleScope) => {
      if (!atLeast(await roleIn(ctx, baseId), role)) throw denied(message ?? `You are not a member of base ${baseId}`);
      return true;
    },
    /** A ui plugin installed and enabled in the base (home-menu plugins and script plugins need no installation). */
    pluginInstalled: async ({ pluginId, baseId }: PluginBaseScope) => {
      await existingBase(ctx, baseId);
      if (!(await plugins.usableInBase(pluginId, baseId))) throw denied(`Plugin ${pluginId} is not installed and enabled in base ${baseId}`);
      return true;
    },
    /** A data method: known, its permission declared, the caller's role high enough. */
    pluginMethod: async (scope: PluginMethodScope) => {
      await checkMethod(ctx, scope, await roleIn(ctx, scope.baseId));
      return true;
    },
    /**
     * The network permission declared, and the first URL's host in its allow-list (after the URL is found to be http(s),
     * SSRF_BLOCKED otherwise); every redirect hop is checked against the list again by the proxy's guard.
     */
    pluginNetwork: async ({ pluginId, url }: PluginNetworkScope) => {
      const allowList = (await plugins.current(pluginId)).manifest.permissions?.network;
      if (!Array.isArray(allowList) || !allowList.length) throw denied(`Plugin ${pluginId} does not declare the network permission`);
      const target = proxyTarget(url);
      if (!hostAllowed(target.hostname, allowList)) throw denied(`${target.hostname} is not in the plugin's network allow-list`);
      return true;
    },
  };
}

/**
 * The guard of the data calls a script makes while it runs (no resolver sees them one by one): the pluginMethod
 * check, with the role the caller held in the base when the run began.
 */
async function scriptGuard(ctx: Context, pluginId: string, baseId: string): Promise<DataCallGuard> {
  const role = await roleIn(ctx, baseId);
  return (method) => checkMethod(ctx, { pluginId, baseId, method }, role);
}

/** Who a script runs for: the context's actor, its data calls through the gateway, each guarded. */
export async function scriptCaller(schema: GraphQLSchema, ctx: Context, pluginId: string, baseId: string): Promise<ScriptCaller> {
  // Resolvers that run scripts are behind loggedIn, and workflows pass their own actor: there is always a caller.
  return { actor: ctx.actor!, gateway: pluginGateway(schema, ctx), guard: await scriptGuard(ctx, pluginId, baseId) };
}

/**
 * run_script steps, as the workflow: the plugin enabled and the workflow an editor of its base (always, for its own
 * base), checked here as for a user's run; the script's data calls pass the same scope checks as a user's.
 */
export function workflowScriptRunner(schema: GraphQLSchema, services: Services): ScriptRunner {
  return async (pluginId, params, { actor, tableId, recordId }) => {
    const ctx: Context & { actor: WorkflowActor } = { actor, services, requestId: actor.id, clientAddress: 'workflow' };
    const scopes = pluginScopes(ctx);
    await scopes.pluginEnabled(pluginId);
    await scopes.pluginBaseRole({ baseId: actor.baseId, role: 'editor', message: `Workflow ${actor.id} may not run scripts in base ${actor.baseId}` });
    const caller = { ...(await scriptCaller(schema, ctx, pluginId, actor.baseId)), actor };
    return services.pluginRuns.runForWorkflow(caller, pluginId, tableId, recordId, params);
  };
}

const RECORD = 'id fields createdAt updatedAt';
interface GatewayRecord { id: string; fields: unknown; createdAt: string; updatedAt: string }
interface GatewayPage { items: GatewayRecord[]; total: number; page: number; pageSize: number }
/** Plugins see record values keyed by field name, under `values`. */
const pluginRecord = (r: GatewayRecord) => ({ id: r.id, values: r.fields, createdAt: r.createdAt, updatedAt: r.updatedAt });

export function pluginGateway(schema: GraphQLSchema, ctx: Context): PluginDataGateway {
  const run = <T>(source: string, variables?: Record<string, unknown>) => runOperation<T>(schema, ctx, source, variables);
  return {
    async listTables(baseId) {
      const d = await run<{ tables: { items: unknown[] } }>('query PluginTables($b: ID) { tables(baseId: $b, pageSize: 1000) { items { id name description } } }', { b: baseId });
      return d.tables.items;
    },
    async getSchema(tableId) {
      const d = await run<{ table: Record<string, unknown>; fields: { items: unknown[] } }>(
        'query PluginSchema($t: ID!) { table(id: $t) { id name description } fields(tableId: $t, pageSize: 1000) { items { id name type required options config } } }', { t: tableId });
      return { ...d.table, fields: d.fields.items };
    },
    async getRecords(tableId, q) {
      const page = `items { ${RECORD} } total page pageSize`;
      const d = q.search
        ? (await run<{ list: GatewayPage }>(`query PluginSearch($t: ID!, $q: String!, $p: Int, $s: Int) { list: searchRecords(tableId: $t, q: $q, page: $p, pageSize: $s) { ${page} } }`, { t: tableId, q: q.search, p: q.page, s: q.perPage }))
        : (await run<{ list: GatewayPage }>(`query PluginRecords($t: ID!, $p: Int, $s: Int) { list: records(tableId: $t, page: $p, pageSize: $s) { ${page} } }`, { t: tableId, p: q.page, s: q.perPage }));
      return { items: d.list.items.map(pluginRecord), total: d.list.total, page: d.list.page, per_page: d.list.pageSize };
    },
    async getRecord(tableId, recordId) {
      const d = await run<{ record: GatewayRecord }>(`query PluginRecord($t: ID!, $id: ID!) { record(tableId: $t, id: $id) { ${RECORD} } }`, { t: tableId, id: recordId });
      return pluginRecord(d.record);
    },
    async createRecord(tableId, values) {
      const d = await run<{ createRecord: GatewayRecord }>(`mutation PluginCreate($t: ID!, $v: JSON!) { createRecord(tableId: $t, fields: $v) { ${RECORD} } }`, { t: tableId, v: values });
      return pluginRecord(d.createRecord);
    },
    async updateRecord(tableId, recordId, values) {
      const d = await run<{ updateRecord: GatewayRecord }>(`mutation PluginUpdate($t: ID!, $id: ID!, $v: JSON!) { updateRecord(tableId: $t, id: $id, fields: $v) { ${RECORD} } }`, { t: tableId, id: recordId, v: values });
      return pluginRecord(d.updateRecord);
    },
    async deleteRecord(tableId, recordId) {
      const d = await run<{ deleteRecord: unknown }>('mutation PluginDelete($t: ID!, $id: ID!) { deleteRecord(tableId: $t, id: $id) { id deleted } }', { t: tableId, id: recordId });
      return d.deleteRecord;
    },
  };
}
