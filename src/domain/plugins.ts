// The plugin platform's host side (spec 3, contract section 7): packages and versions, status, configuration,
// base installations, storage, the RPC checks, the network proxy and signed sandbox URLs.
import { randomBytes } from 'node:crypto';
import { and, asc, count, eq } from 'drizzle-orm';
import semver from 'semver';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { pluginConfigs, pluginFiles, pluginInstallations, pluginStorage, plugins, pluginVersions, tables } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { AppError, badRequest, conflict, notFound, type ErrorDetail } from '../errors.js';
import { nowIso } from '../ids.js';
import { readPackage, PackageError } from '../../plugins-runtime/package-reader.js';
import { compileConfigSchema, type Manifest } from '../../plugins-runtime/manifest.js';
import type { RateLimiter } from '../auth/rate-limit.js';
import type { UrlSigner } from '../auth/url-signer.js';
import { BlockedError, TooLargeError, UpstreamTimeoutError, type GuardedFetch } from '../net/ssrf-guard.js';
import { atLeast, type Access, type Role } from './access.js';
import type { Actor, Deps } from './deps.js';

export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
export const FAILURES_TO_ERROR = 5;
const SANDBOX_URL_TTL = 600;
const STORAGE_VALUE_LIMIT = 64 * 1024;
const STORAGE_KEY_LIMIT = 1000;

export interface PluginView {
  id: string;
  name: string;
  description: string;
  author: Record<string, unknown>;
  type: 'ui' | 'script';
  version: string;
  versions: Array<{ version: string; uploadedAt: string }>;
  status: 'enabled' | 'disabled' | 'error';
  consecutiveFailures: number;
  permissions: Record<string, unknown>;
  extensionPoints: unknown[];
  endpoints: unknown[];
  configSchema: unknown;
  createdAt: string;
  updatedAt: string;
  installation?: { installed: boolean; enabled: boolean } | null;
}

/** What a plugin's data calls do, as the calling user; the schema layer runs them as GraphQL operations. */
export interface PluginDataGateway {
  listTables(baseId: string): Promise<unknown[]>;
  getSchema(tableId: string): Promise<unknown>;
  getRecords(tableId: string, q: { page?: number; perPage?: number; search?: string }): Promise<unknown>;
  getRecord(tableId: string, recordId: string): Promise<unknown>;
  createRecord(tableId: string, values: unknown): Promise<unknown>;
  updateRecord(tableId: string, recordId: string, values: unknown): Promise<unknown>;
  deleteRecord(tableId: string, recordId: string): Promise<unknown>;
}

/** Permission and minimum role of each data method (spec 3, 4.2). */
const METHODS: Record<string, { permission?: (p: Manifest['permissions']) => boolean; role: Role }> = {
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

/** Headers a plugin may neither send nor receive through the proxy. */
const CONTROLLED = /^(cookie|set-cookie|authorization|proxy-.*|host|connection|keep-alive|te|trailer|transfer-encoding|upgrade|content-length)$/i;

const denied = (message: string) => new AppError('PERMISSION_DENIED', message);
const invalidParams = (message: string) => new AppError('INVALID_PARAMS', message);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Base deep-merged over global: objects merge key by key, anything else is replaced. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/** A WHATWG-canonical host matches an allow-list entry exactly or as a subdomain. */
export function hostAllowed(host: string, allowList: string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowList.some((entry) => {
    let e = entry.toLowerCase().trim().replace(/\.$/, '');
    try {
      e = new URL(`http://${e.includes(':') && !e.startsWith('[') ? `[${e}]` : e}/`).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return false;
    }
    return h === e || h.endsWith(`.${e}`);
  });
}

export function createPluginService(deps: Deps, opts: {
  access: Access;
  hostVersion: string;
  signer: UrlSigner;
  fetch: GuardedFetch;
  limiter: RateLimiter;
  proxyRatePerMinute: number;
}) {
  const { sqlite, orm } = deps;
  const { access, signer } = opts;
  /** Compiled configSchemas by plugin and version (a schema may carry an $id, so each gets its own compile). */
  const configValidators = new Map<string, ValidateFunction>();
  /** Context of each open sandbox (selection snapshot), by handshake token, for ui.getContext and selection.get. */
  const opens = new Map<string, { pluginId: string; baseId: string; context: Record<string, unknown>; exp: number }>();

  function row(id: string) {
    const r = orm.select().from(plugins).where(eq(plugins.id, id)).get();
    if (!r) throw notFound(`Plugin ${id} not found`);
    return r;
  }
  function manifestOf(id: string, version: string): Manifest {
    return orm.select().from(pluginVersions).where(and(eq(pluginVersions.pluginId, id), eq(pluginVersions.version, version))).get()!.manifest as unknown as Manifest;
  }
  function current(id: string) {
    const r = row(id);
    return { row: r, manifest: manifestOf(id, r.currentVersion) };
  }

  function view(id: string, baseId?: string | null): PluginView {
    const { row: r, manifest: m } = current(id);
    const versions = orm.select({ version: pluginVersions.version, uploadedAt: pluginVersions.uploadedAt }).from(pluginVersions)
      .where(eq(pluginVersions.pluginId, id)).all().sort((a, b) => semver.rcompare(a.version, b.version));
    let installation: PluginView['installation'];
    if (baseId) {
      if (r.type === 'ui') {
        const inst = orm.select().from(pluginInstallations).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).get();
        installation = { installed: !!inst, enabled: !!inst?.enabled };
      } else installation = null;
    }
    return {
      id, name: m.name, description: m.description ?? '', author: (m.author ?? {}) as Record<string, unknown>, type: r.type, version: r.currentVersion,
      versions, status: r.status, consecutiveFailures: r.consecutiveFailures, permissions: (m.permissions ?? {}) as Record<string, unknown>,
      extensionPoints: m.extensionPoints ?? [], endpoints: m.endpoints ?? [], configSchema: m.configSchema ?? null,
      createdAt: r.createdAt, updatedAt: r.updatedAt, ...(baseId ? { installation } : {}),
    };
  }

  function assertEnabled(id: string) {
    const c = current(id);
    if (c.row.status === 'disabled') throw new AppError('PLUGIN_DISABLED', `Plugin ${id} is disabled`);
    return c;
  }

  /** Whether a ui plugin is installed and enabled in a base; home-menu plugins are global and need no installation. */
  function usableInBase(id: string, manifest: Manifest, baseId: string): boolean {
    if (manifest.type !== 'ui') return true;
    if ((manifest.extensionPoints ?? []).some((e) => e.type === 'home-menu')) return true;
    const inst = orm.select().from(pluginInstallations).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).get();
    return !!inst?.enabled;
  }

  function roleIn(actor: Actor, baseId: string): Role | null {
    access.baseOf({ baseId }); // 404 for a base that does not exist
    return access.roleIn(actor, baseId);
  }

  function configRow(id: string, baseId: string) {
    return orm.select().from(pluginConfigs).where(and(eq(pluginConfigs.pluginId, id), eq(pluginConfigs.baseId, baseId))).get()?.config ?? {};
  }

  function effectiveConfig(id: string, baseId: string | null) {
    return deepMerge(configRow(id, ''), baseId ? configRow(id, baseId) : {}) as Record<string, unknown>;
  }

  function validateConfig(manifest: Manifest, config: unknown): ErrorDetail[] {
    if (!manifest.configSchema) return [];
    const key = `${manifest.id}@${manifest.version}`;
    let validate = configValidators.get(key);
    if (!validate) configValidators.set(key, (validate = compileConfigSchema(manifest.configSchema as Record<string, unknown>)));
    if (validate(config)) return [];
    return (validate.errors ?? []).map((e) => ({ field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'config', message: `${e.instancePath || 'config'} ${e.message}` }));
  }

  function storageCall(id: string, baseId: string, method: string, params: Record<string, unknown>) {
    if (typeof params.key !== 'string' || !params.key || params.key.length > 256) throw invalidParams('key must be a string of 1 to 256 characters');
    const where = and(eq(pluginStorage.pluginId, id), eq(pluginStorage.baseId, baseId), eq(pluginStorage.key, params.key));
    if (method === 'storage.get') {
      const r = orm.select().from(pluginStorage).where(where).get();
      return r ? JSON.parse(r.value) : null;
    }
    if (method === 'storage.remove') {
      const removed = orm.delete(pluginStorage).where(where).run().changes;
      return { removed: removed > 0 };
    }
    if (params.value === undefined) throw invalidParams('value is required (any JSON)');
    const text = JSON.stringify(params.value);
    if (Buffer.byteLength(text) > STORAGE_VALUE_LIMIT) throw new AppError('PAYLOAD_TOO_LARGE', `A stored value may be at most ${STORAGE_VALUE_LIMIT} bytes`);
    return writeTransaction(sqlite, () => {
      const exists = orm.select({ key: pluginStorage.key }).from(pluginStorage).where(where).get();
      if (!exists) {
        const n = orm.select({ n: count() }).from(pluginStorage).where(and(eq(pluginStorage.pluginId, id), eq(pluginStorage.baseId, baseId))).get()!.n;
        if (n >= STORAGE_KEY_LIMIT) throw conflict(`A plugin may keep at most ${STORAGE_KEY_LIMIT} keys per base`);
      }
      orm.insert(pluginStorage).values({ pluginId: id, baseId, key: params.key as string, value: text })
        .onConflictDoUpdate({ target: [pluginStorage.pluginId, pluginStorage.baseId, pluginStorage.key], set: { value: text } }).run();
      return { key: params.key, stored: true };
    });
  }

  /** A table id named by a data call must belong to the call's base. */
  function tableInBase(baseId: string, tableId: unknown): string {
    if (typeof tableId !== 'string' || !tableId) throw invalidParams('tableId is required');
    const t = orm.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, tableId)).get();
    if (t?.baseId !== baseId) throw notFound(`Table ${tableId} not found in base ${baseId}`);
    return tableId;
  }

  /** The table of the base that holds a record (record calls may name only the record). */
  function tableOfRecord(baseId: string, recordId: string): string | null {
    for (const t of orm.select({ id: tables.id }).from(tables).where(eq(tables.baseId, baseId)).all()) {
      if (deps.store.existing(t.id, [recordId]).has(recordId)) return t.id;
    }
    return null;
  }

  /**
   * One data call of a plugin after the plugin-level checks: the method's permission must be declared and the
   * user's role high enough (contract section 7), then it runs as the user. Shared by ui RPC and script runs.
   */
  async function dataCall(
    gateway: PluginDataGateway, id: string, manifest: Manifest, baseId: string, role: Role | null,
    method: string, params: Record<string, unknown>, openContext?: Record<string, unknown>,
  ): Promise<unknown> {
    const spec = METHODS[method];
    if (!spec) {
      if (method === 'network.fetch') throw denied('network.fetch goes through POST /api/plugins/{id}/proxy');
      throw new AppError('METHOD_NOT_FOUND', `Unknown method ${JSON.stringify(method)}`);
    }
    if (spec.permission && !spec.permission(manifest.permissions)) throw denied(`${method} needs a permission that plugin ${id} does not declare`);
    if (!atLeast(role, spec.role)) throw denied(`${method} needs the ${spec.role} role in base ${baseId}`);
    const tableId = params.tableId as string | undefined;
    switch (method) {
      case 'ui.getContext':
        return { pluginId: id, baseId, tableId: tableId ?? null, recordId: null, selection: null, ...(openContext ?? {}) };
      case 'selection.get':
        return openContext?.selection ?? null;
      case 'config.get':
        return effectiveConfig(id, baseId);
      case 'storage.get':
      case 'storage.set':
      case 'storage.remove':
        return storageCall(id, baseId, method, params);
      case 'table.listTables':
        return gateway.listTables(baseId);
      case 'table.getSchema':
        return gateway.getSchema(tableInBase(baseId, tableId));
      case 'table.getRecords':
        return gateway.getRecords(tableInBase(baseId, tableId), {
          page: params.page as number | undefined, perPage: (params.per_page ?? params.perPage) as number | undefined, search: params.search as string | undefined,
        });
      case 'table.getRecord':
      case 'record.update':
      case 'record.delete': {
        if (typeof params.recordId !== 'string' || !params.recordId) throw invalidParams('recordId is required');
        const recordTable = tableId ? tableInBase(baseId, tableId) : tableOfRecord(baseId, params.recordId);
        if (!recordTable) throw notFound(`Record ${params.recordId} not found in base ${baseId}`);
        if (method === 'table.getRecord') return gateway.getRecord(recordTable, params.recordId);
        if (method === 'record.delete') return gateway.deleteRecord(recordTable, params.recordId);
        return gateway.updateRecord(recordTable, params.recordId, params.values ?? {});
      }
      case 'record.create':
        return gateway.createRecord(tableInBase(baseId, tableId), params.values ?? {});
    }
    throw new AppError('METHOD_NOT_FOUND', `Unknown method ${method}`);
  }

  return {
    current,
    dataCall,
    usableInBase,
    tableInBase,
    effectiveConfig,
    view,
    assertEnabled,
    roleIn,
    signer,

    async uploadPlugin(zip: unknown): Promise<PluginView> {
      const buffer = Buffer.isBuffer(zip) ? zip : typeof zip === 'string' ? Buffer.from(zip, 'base64') : null;
      if (!buffer || buffer.length === 0) throw badRequest('The upload holds no package: send multipart/form-data with a "file" part, or an application/zip body');
      if (buffer.length > MAX_UPLOAD_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `A package may be at most ${MAX_UPLOAD_BYTES} bytes`);
      let pkg: Awaited<ReturnType<typeof readPackage>>;
      try {
        pkg = await readPackage(buffer, { hostVersion: opts.hostVersion });
      } catch (e) {
        if (e instanceof PackageError) {
          throw new AppError('INVALID_PACKAGE', `The package is invalid: ${e.problems.length} problem(s)`, {
            details: e.problems.map((p) => ({ path: p.path, message: p.message })),
          });
        }
        throw e;
      }
      const { manifest, files } = pkg;
      return writeTransaction(sqlite, () => {
        const existing = orm.select().from(plugins).where(eq(plugins.id, manifest.id)).get();
        const now = nowIso();
        if (existing) {
          if (existing.type !== manifest.type) throw conflict(`Plugin ${manifest.id} is a ${existing.type} plugin; a new version cannot change its type`);
          const highest = orm.select({ version: pluginVersions.version }).from(pluginVersions).where(eq(pluginVersions.pluginId, manifest.id)).all()
            .map((v) => v.version).sort(semver.rcompare)[0];
          if (!semver.gt(manifest.version, highest)) {
            throw new AppError('VERSION_NOT_HIGHER', `Version ${manifest.version} is not higher than ${highest}, the highest version of ${manifest.id}`);
          }
          orm.update(plugins).set({ currentVersion: manifest.version, updatedAt: now }).where(eq(plugins.id, manifest.id)).run();
        } else {
          // A first upload waits for an administrator to enable it.
          orm.insert(plugins).values({ id: manifest.id, type: manifest.type, currentVersion: manifest.version, status: 'disabled', createdAt: now, updatedAt: now }).run();
        }
        orm.insert(pluginVersions).values({ pluginId: manifest.id, version: manifest.version, manifest: manifest as unknown as Record<string, unknown>, uploadedAt: now }).run();
        for (const [path, content] of files) orm.insert(pluginFiles).values({ pluginId: manifest.id, version: manifest.version, path, content }).run();
        return view(manifest.id);
      });
    },

    async listPlugins(baseId?: string | null): Promise<PluginView[]> {
      if (baseId) access.baseOf({ baseId });
      return orm.select({ id: plugins.id }).from(plugins).orderBy(asc(plugins.createdAt)).all().map((p) => view(p.id, baseId));
    },

    async getPlugin(id: string, baseId?: string | null): Promise<PluginView> {
      return view(id, baseId);
    },

    async setStatus(id: string, action: unknown): Promise<PluginView> {
      if (action !== 'enable' && action !== 'disable' && action !== 'restore') throw badRequest('action must be enable, disable or restore', [{ field: 'action', message: 'must be enable, disable or restore' }]);
      return writeTransaction(sqlite, () => {
        const r = row(id);
        if (action === 'restore' && r.status !== 'error') throw conflict(`Plugin ${id} is ${r.status}; only a plugin in error can be restored`);
        const status = action === 'disable' ? 'disabled' : 'enabled';
        const resetFailures = action !== 'disable';
        orm.update(plugins).set({ status, ...(resetFailures ? { consecutiveFailures: 0 } : {}), updatedAt: nowIso() }).where(eq(plugins.id, id)).run();
        return view(id);
      });
    },

    async rollback(id: string, version: unknown): Promise<PluginView> {
      if (typeof version !== 'string' || !version) throw badRequest('version is required', [{ field: 'version', message: 'required' }]);
      return writeTransaction(sqlite, () => {
        const r = row(id);
        if (!orm.select().from(pluginVersions).where(and(eq(pluginVersions.pluginId, id), eq(pluginVersions.version, version))).get()) {
          throw notFound(`Version ${version} of plugin ${id} is not retained`);
        }
        if (r.currentVersion === version) throw conflict(`Version ${version} is already current`);
        orm.update(plugins).set({ currentVersion: version, updatedAt: nowIso() }).where(eq(plugins.id, id)).run();
        return view(id);
      });
    },

    async uninstallPlugin(id: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        row(id);
        orm.delete(pluginFiles).where(eq(pluginFiles.pluginId, id)).run();
        orm.delete(plugins).where(eq(plugins.id, id)).run(); // versions, config, installations and storage cascade
        return { id, deleted: true as const };
      });
    },

    async getConfig(id: string, scope: unknown, baseId: string | null | undefined) {
      const { baseKey } = this.configScope(id, scope, baseId);
      return { scope: scope as string, baseId: baseKey || null, config: configRow(id, baseKey), effective: effectiveConfig(id, baseKey || null) };
    },

    async putConfig(id: string, scope: unknown, baseId: string | null | undefined, config: unknown) {
      const { baseKey } = this.configScope(id, scope, baseId);
      if (!isObject(config)) throw new AppError('INVALID_CONFIG', 'config must be an object', { details: [{ field: 'config', message: 'must be an object' }] });
      const { manifest } = current(id);
      // The stored scope must be valid on its own for global; a base override is checked once merged over global.
      const candidate = scope === 'global' ? config : deepMerge(configRow(id, ''), config);
      const problems = validateConfig(manifest, candidate);
      if (problems.length) throw new AppError('INVALID_CONFIG', `The configuration does not match the plugin's configSchema: ${problems.map((p) => p.message).join('; ')}`, { details: problems });
      writeTransaction(sqlite, () => {
        orm.insert(pluginConfigs).values({ pluginId: id, baseId: baseKey, config, updatedAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginConfigs.pluginId, pluginConfigs.baseId], set: { config, updatedAt: nowIso() } }).run();
      });
      return { scope: scope as string, baseId: baseKey || null, config, effective: effectiveConfig(id, baseKey || null) };
    },

    /** Checks a config scope: global, or base with an existing base_id. */
    configScope(id: string, scope: unknown, baseId: string | null | undefined) {
      row(id);
      if (scope !== 'global' && scope !== 'base') throw badRequest('scope must be global or base', [{ field: 'scope', message: 'must be global or base' }]);
      if (scope === 'base') {
        if (!baseId) throw badRequest('base_id is required for scope=base', [{ field: 'base_id', message: 'required' }]);
        access.baseOf({ baseId });
        return { baseKey: baseId };
      }
      return { baseKey: '' };
    },

    async installPlugin(id: string, baseId: string, enabled = true): Promise<PluginView> {
      return writeTransaction(sqlite, () => {
        const r = row(id);
        if (r.type !== 'ui') throw badRequest(`Plugin ${id} is a script plugin: only ui plugins are installed in bases`);
        orm.insert(pluginInstallations).values({ pluginId: id, baseId, enabled, createdAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginInstallations.pluginId, pluginInstallations.baseId], set: { enabled } }).run();
        return view(id, baseId);
      });
    },

    async setInstallation(id: string, baseId: string, enabled: unknown): Promise<PluginView> {
      if (typeof enabled !== 'boolean') throw badRequest('enabled must be true or false', [{ field: 'enabled', message: 'must be true or false' }]);
      return writeTransaction(sqlite, () => {
        const r = row(id);
        if (r.type !== 'ui') throw badRequest(`Plugin ${id} is a script plugin: only ui plugins are installed in bases`);
        const changed = orm.update(pluginInstallations).set({ enabled }).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).run().changes;
        if (!changed) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(id, baseId);
      });
    },

    async removeInstallation(id: string, baseId: string): Promise<PluginView> {
      return writeTransaction(sqlite, () => {
        row(id);
        const removed = orm.delete(pluginInstallations).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).run().changes;
        if (!removed) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(id, baseId);
      });
    },

    /**
     * A data call of a ui plugin (contract section 7), checked in order: plugin enabled, installed and enabled in the
     * base, the method's permission declared, the user's role; then run as the user.
     */
    async rpc(actor: Actor, gateway: PluginDataGateway, id: string, req: { baseId?: unknown; tableId?: unknown; method?: unknown; params?: unknown; handshakeToken?: unknown }): Promise<unknown> {
      const { manifest } = assertEnabled(id);
      if (typeof req.baseId !== 'string' || !req.baseId) throw invalidParams('base_id is required');
      const baseId = req.baseId;
      const role = roleIn(actor, baseId);
      if (!usableInBase(id, manifest, baseId)) throw denied(`Plugin ${id} is not installed and enabled in base ${baseId}`);
      const params = req.params === undefined || req.params === null ? {} : req.params;
      if (!isObject(params)) throw invalidParams('params must be an object');
      const open = typeof req.handshakeToken === 'string' ? opens.get(req.handshakeToken) : undefined;
      const openContext = open && open.pluginId === id && open.baseId === baseId && open.exp > Date.now() / 1000 ? open.context : undefined;
      return dataCall(gateway, id, manifest, baseId, role, String(req.method ?? ''), { tableId: req.tableId, ...params }, openContext);
    },

    /**
     * network.fetch: the allow-list (first URL: PERMISSION_DENIED; a redirect hop outside it: SSRF_BLOCKED, before DNS),
     * the SSRF guard on every hop, header filtering both ways, a per-plugin rate limit.
     */
    async proxy(actor: Actor, id: string, req: { baseId?: unknown; url?: unknown; method?: unknown; headers?: unknown; body?: unknown; bodyEncoding?: unknown }) {
      const { manifest } = assertEnabled(id);
      if (typeof req.baseId !== 'string' || !req.baseId) throw invalidParams('base_id is required');
      const role = roleIn(actor, req.baseId);
      if (!atLeast(role, 'viewer')) throw denied(`You are not a member of base ${req.baseId}`);
      if (!usableInBase(id, manifest, req.baseId)) throw denied(`Plugin ${id} is not installed and enabled in base ${req.baseId}`);
      const allowList = manifest.permissions?.network;
      if (!Array.isArray(allowList) || !allowList.length) throw denied(`Plugin ${id} does not declare the network permission`);
      if (typeof req.url !== 'string') throw invalidParams('url is required');
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        throw invalidParams(`"${req.url.slice(0, 100)}" is not a URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('SSRF_BLOCKED', `Only http and https are allowed, not ${url.protocol}`);
      if (!hostAllowed(url.hostname, allowList)) throw denied(`${url.hostname} is not in the plugin's network allow-list`);
      const method = String(req.method ?? 'GET').toUpperCase();
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].includes(method)) throw invalidParams(`method ${method} is not allowed`);
      if (req.headers !== undefined && req.headers !== null && (!isObject(req.headers) || Object.values(req.headers).some((v) => typeof v !== 'string'))) {
        throw invalidParams('headers must be an object of strings');
      }
      const headers = Object.fromEntries(Object.entries((req.headers ?? {}) as Record<string, string>).filter(([k]) => !CONTROLLED.test(k)));
      let body: Buffer | undefined;
      if (req.body !== undefined && req.body !== null) {
        if (typeof req.body !== 'string') throw invalidParams('body must be a string (text, or base64 with body_encoding "base64")');
        body = req.bodyEncoding === 'base64' ? Buffer.from(req.body, 'base64') : Buffer.from(req.body, 'utf8');
      }
      const rate = opts.limiter.hit(`proxy:${id}`, opts.proxyRatePerMinute);
      if (!rate.allowed) {
        throw new AppError('RATE_LIMITED', `Plugin ${id} made more than ${opts.proxyRatePerMinute} proxy requests in a minute`, { headers: { 'Retry-After': String(rate.resetSeconds) } });
      }
      try {
        // The allow-list goes with the request so the guard applies it to every redirect hop too, before DNS.
        const answer = await opts.fetch({ url: url.toString(), method, headers, body, allowHost: (host) => hostAllowed(host, allowList) });
        const outHeaders = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !CONTROLLED.test(k)));
        const type = answer.headers['content-type'] ?? '';
        const isText = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i.test(type) || answer.body.length === 0;
        return { status: answer.status, headers: outHeaders, body: answer.body.toString(isText ? 'utf8' : 'base64'), bodyEncoding: isText ? 'text' : 'base64' };
      } catch (e) {
        if (e instanceof BlockedError) throw new AppError('SSRF_BLOCKED', e.message);
        if (e instanceof UpstreamTimeoutError) throw new AppError('UPSTREAM_TIMEOUT', e.message);
        if (e instanceof TooLargeError) throw new AppError('RESPONSE_TOO_LARGE', e.message);
        throw new AppError('ENDPOINT_FAILED', `The request to ${url.hostname} failed: ${(e as Error).message}`);
      }
    },

    /** A signed loader URL for one opening of a ui plugin, valid 10 minutes; its handshake token keys the selection snapshot. */
    async sandboxUrl(actor: Actor, id: string, req: { baseId?: unknown; tableId?: unknown; recordId?: unknown; extensionPoint?: unknown; selection?: unknown }) {
      const { row: r, manifest } = assertEnabled(id);
      if (r.type !== 'ui') throw badRequest(`Plugin ${id} is a script plugin and has no user interface`);
      if (typeof req.baseId !== 'string' || !req.baseId) throw invalidParams('base_id is required');
      const role = roleIn(actor, req.baseId);
      if (!atLeast(role, 'viewer')) throw denied(`You are not a member of base ${req.baseId}`);
      if (!usableInBase(id, manifest, req.baseId)) throw denied(`Plugin ${id} is not installed and enabled in base ${req.baseId}`);
      const points = (manifest.extensionPoints ?? []).map((e) => e.type);
      if (typeof req.extensionPoint !== 'string' || !points.includes(req.extensionPoint as never)) {
        throw invalidParams(`extension_point must be one the plugin declares: ${points.join(', ')}`);
      }
      if (req.tableId !== undefined && req.tableId !== null) tableInBase(req.baseId, req.tableId);
      const selection = normalizeSelection(req.selection);
      const ht = randomBytes(18).toString('base64url');
      const exp = Math.floor(Date.now() / 1000) + SANDBOX_URL_TTL;
      const context = {
        pluginId: id, baseId: req.baseId, tableId: req.tableId ?? null, extensionPoint: req.extensionPoint,
        recordId: req.extensionPoint === 'record-detail-block' ? (req.recordId ?? null) : null, selection,
      };
      for (const [token, o] of opens) if (o.exp * 1000 < Date.now()) opens.delete(token);
      opens.set(ht, { pluginId: id, baseId: req.baseId, context, exp });
      const sig = signer.sign(['loader', id, r.currentVersion, ht], exp);
      const url = `${deps.config.publicUrl}/api/plugins/${encodeURIComponent(id)}/versions/${encodeURIComponent(r.currentVersion)}/loader.html?exp=${exp}&ht=${ht}&sig=${sig}`;
      return { url, expiresAt: new Date(exp * 1000).toISOString(), handshakeToken: ht, context, permissions: manifest.permissions ?? {} };
    },

    /** The files of a version, for the loader and signed file URLs. */
    file(id: string, version: string, path: string): Buffer | undefined {
      return orm.select({ content: pluginFiles.content }).from(pluginFiles)
        .where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version), eq(pluginFiles.path, path))).get()?.content;
    },
    filesOf(id: string, version: string): string[] {
      return orm.select({ path: pluginFiles.path }).from(pluginFiles).where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version))).all().map((f) => f.path);
    },
    manifestOf(id: string, version: string): Manifest | undefined {
      const v = orm.select().from(pluginVersions).where(and(eq(pluginVersions.pluginId, id), eq(pluginVersions.version, version))).get();
      return v?.manifest as unknown as Manifest | undefined;
    },

    /** Counts a failed run or call; the fifth in a row puts the plugin in `error` (it keeps working). */
    recordOutcome(id: string, failed: boolean) {
      writeTransaction(sqlite, () => {
        const r = orm.select().from(plugins).where(eq(plugins.id, id)).get();
        if (!r) return;
        const failures = failed ? r.consecutiveFailures + 1 : 0;
        const status = failed && failures >= FAILURES_TO_ERROR && r.status === 'enabled' ? 'error' : r.status;
        orm.update(plugins).set({ consecutiveFailures: failures, status }).where(eq(plugins.id, id)).run();
      });
    },
  };
}

/** Spec 3, 2.5: ids only, at most 1000, with the real total and whether it was cut. */
function normalizeSelection(raw: unknown) {
  if (raw === undefined || raw === null) return { recordIds: [], total: 0, truncated: false, selectAll: false, scope: 'page', at: Date.now() };
  if (!isObject(raw)) throw invalidParams('selection must be an object');
  const ids = Array.isArray(raw.recordIds) ? raw.recordIds.filter((x): x is string => typeof x === 'string') : [];
  const total = Number.isInteger(raw.total) ? Math.max(raw.total as number, ids.length) : ids.length;
  return {
    recordIds: ids.slice(0, 1000), total, truncated: total > 1000 || ids.length > 1000, selectAll: raw.selectAll === true,
    scope: raw.scope === 'view' ? 'view' : 'page', at: Number.isInteger(raw.at) ? raw.at : Date.now(),
  };
}

export type PluginService = ReturnType<typeof createPluginService>;
