// Plugin configuration per scope (global, or a base override deep-merged over it), validated against configSchema.
import { and, eq } from 'drizzle-orm';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { first, type UnitOfWork } from '../../db/store.js';
import { AppError, badRequest, type ErrorDetail } from '../../errors.js';
import { nowIso } from '../../ids.js';
import { isObject } from '../../checks.js';
import { compileConfigSchema, type Manifest } from '../../../plugins-runtime/manifest.js';
import type { Access } from '../access.js';
import type { Deps } from '../deps.js';
import type { Catalog } from './catalog.js';

export type ConfigScope = 'global' | 'base';

export interface ConfigAnswer {
  scope: ConfigScope;
  baseId: string | null;
  config: unknown;
  effective: unknown;
}

/** Base deep-merged over global: objects merge key by key, anything else is replaced. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

export function createConfig(deps: Deps, catalog: Catalog, access: Access) {
  const { store } = deps;
  const { pluginConfigs } = store.schema;
  /** Compiled configSchemas by plugin and version (a schema may carry an $id, so each gets its own compile). */
  const validators = new Map<string, ValidateFunction>();

  /** The stored configuration of one scope: base id '' is the global scope. */
  async function stored(uow: UnitOfWork, id: string, baseKey: string): Promise<unknown> {
    return (await first(uow.db.select().from(pluginConfigs).where(and(eq(pluginConfigs.pluginId, id), eq(pluginConfigs.baseId, baseKey))).limit(1)))?.config ?? {};
  }

  async function effective(uow: UnitOfWork, id: string, baseId: string | null): Promise<Record<string, unknown>> {
    return deepMerge(await stored(uow, id, ''), baseId ? await stored(uow, id, baseId) : {}) as Record<string, unknown>;
  }

  function validate(manifest: Manifest, config: unknown): ErrorDetail[] {
    if (!manifest.configSchema) return [];
    const key = `${manifest.id}@${manifest.version}`;
    let check = validators.get(key);
    if (!check) validators.set(key, (check = compileConfigSchema(manifest.configSchema as Record<string, unknown>)));
    if (check(config)) return [];
    return (check.errors ?? []).map((e) => ({ field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'config', message: `${e.instancePath || 'config'} ${e.message}` }));
  }

  /** The storage key of a scope: '' for global; scope=base needs an existing base. */
  async function scopeKey(id: string, scope: ConfigScope, baseId: string | null | undefined): Promise<string> {
    await catalog.row(store, id);
    if (scope !== 'base') return '';
    if (!baseId) throw badRequest('base_id is required for scope=base', [{ field: 'base_id', message: 'required' }]);
    await access.baseOf({ baseId });
    return baseId;
  }

  return {
    effective,

    async get(id: string, scope: ConfigScope, baseId: string | null | undefined): Promise<ConfigAnswer> {
      const baseKey = await scopeKey(id, scope, baseId);
      return { scope, baseId: baseKey || null, config: await stored(store, id, baseKey), effective: await effective(store, id, baseKey || null) };
    },

    async put(id: string, scope: ConfigScope, baseId: string | null | undefined, config: unknown): Promise<ConfigAnswer> {
      const baseKey = await scopeKey(id, scope, baseId);
      if (!isObject(config)) throw new AppError('INVALID_CONFIG', 'config must be an object', { details: [{ field: 'config', message: 'must be an object' }] });
      // The manifest and the global scope are read in the transaction that writes, so the check holds for what commits.
      return store.transaction(async (tx) => {
        const { manifest } = await catalog.current(tx, id);
        // The stored scope must be valid on its own for global; a base override is checked once merged over global.
        const candidate = scope === 'global' ? config : deepMerge(await stored(tx, id, ''), config);
        const problems = validate(manifest, candidate);
        if (problems.length) throw new AppError('INVALID_CONFIG', `The configuration does not match the plugin's configSchema: ${problems.map((p) => p.message).join('; ')}`, { details: problems });
        await tx.db.insert(pluginConfigs).values({ pluginId: id, baseId: baseKey, config, updatedAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginConfigs.pluginId, pluginConfigs.baseId], set: { config, updatedAt: nowIso() } });
        return { scope, baseId: baseKey || null, config, effective: await effective(tx, id, baseKey || null) };
      });
    },
  };
}
