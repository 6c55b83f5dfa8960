// Plugin configuration per scope (global, or a base override deep-merged over it), validated against configSchema.
import { and, eq } from 'drizzle-orm';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { pluginConfigs } from '../../db/schema.js';
import { writeTransaction } from '../../db/connection.js';
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
  const { sqlite, orm } = deps;
  /** Compiled configSchemas by plugin and version (a schema may carry an $id, so each gets its own compile). */
  const validators = new Map<string, ValidateFunction>();

  /** The stored configuration of one scope: base id '' is the global scope. */
  function stored(id: string, baseKey: string) {
    return orm.select().from(pluginConfigs).where(and(eq(pluginConfigs.pluginId, id), eq(pluginConfigs.baseId, baseKey))).get()?.config ?? {};
  }

  function effective(id: string, baseId: string | null) {
    return deepMerge(stored(id, ''), baseId ? stored(id, baseId) : {}) as Record<string, unknown>;
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
  function scopeKey(id: string, scope: ConfigScope, baseId: string | null | undefined): string {
    catalog.row(id);
    if (scope !== 'base') return '';
    if (!baseId) throw badRequest('base_id is required for scope=base', [{ field: 'base_id', message: 'required' }]);
    access.baseOf({ baseId });
    return baseId;
  }

  return {
    effective,

    async get(id: string, scope: ConfigScope, baseId: string | null | undefined): Promise<ConfigAnswer> {
      const baseKey = scopeKey(id, scope, baseId);
      return { scope, baseId: baseKey || null, config: stored(id, baseKey), effective: effective(id, baseKey || null) };
    },

    async put(id: string, scope: ConfigScope, baseId: string | null | undefined, config: unknown): Promise<ConfigAnswer> {
      const baseKey = scopeKey(id, scope, baseId);
      if (!isObject(config)) throw new AppError('INVALID_CONFIG', 'config must be an object', { details: [{ field: 'config', message: 'must be an object' }] });
      const { manifest } = catalog.current(id);
      // The stored scope must be valid on its own for global; a base override is checked once merged over global.
      const candidate = scope === 'global' ? config : deepMerge(stored(id, ''), config);
      const problems = validate(manifest, candidate);
      if (problems.length) throw new AppError('INVALID_CONFIG', `The configuration does not match the plugin's configSchema: ${problems.map((p) => p.message).join('; ')}`, { details: problems });
      writeTransaction(sqlite, () => {
        orm.insert(pluginConfigs).values({ pluginId: id, baseId: baseKey, config, updatedAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginConfigs.pluginId, pluginConfigs.baseId], set: { config, updatedAt: nowIso() } }).run();
      });
      return { scope, baseId: baseKey || null, config, effective: effective(id, baseKey || null) };
    },
  };
}
