// Base installations of ui plugins, and whether a plugin may be used in a base at all.
import { and, eq } from 'drizzle-orm';
import type { UnitOfWork } from '../../db/store.js';
import { badRequest, notFound } from '../../errors.js';
import { nowIso } from '../../ids.js';
import type { Deps } from '../deps.js';
import type { Catalog, PluginView } from './catalog.js';

export function createInstallations(deps: Deps, catalog: Catalog) {
  const { store } = deps;
  const { pluginInstallations } = store.schema;
  const { row, view } = catalog;
  const where = (id: string, baseId: string) => and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId));

  /** Only ui plugins are installed: a script plugin runs in any base its caller may edit. */
  async function uiOnly(uow: UnitOfWork, id: string) {
    if ((await row(uow, id)).type !== 'ui') throw badRequest(`Plugin ${id} is a script plugin: only ui plugins are installed in bases`);
  }

  return {
    /**
     * Whether the current version may be used in a base: script plugins always; ui plugins when installed and enabled
     * there, or anywhere when they have a home-menu extension point (global, no installation).
     */
    async usableInBase(id: string, baseId: string): Promise<boolean> {
      const { manifest } = await catalog.current(store, id);
      if (manifest.type !== 'ui') return true;
      if ((manifest.extensionPoints ?? []).some((e) => e.type === 'home-menu')) return true;
      return !!(await catalog.installationRow(store, id, baseId))?.enabled;
    },

    async install(id: string, baseId: string, enabled = true): Promise<PluginView> {
      return store.transaction(async (tx) => {
        await uiOnly(tx, id);
        await tx.db.insert(pluginInstallations).values({ pluginId: id, baseId, enabled, createdAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginInstallations.pluginId, pluginInstallations.baseId], set: { enabled } });
        return view(tx, id, baseId);
      });
    },

    async setEnabled(id: string, baseId: string, enabled: boolean): Promise<PluginView> {
      return store.transaction(async (tx) => {
        await uiOnly(tx, id);
        const changed = await tx.db.update(pluginInstallations).set({ enabled }).where(where(id, baseId)).returning({ pluginId: pluginInstallations.pluginId });
        if (!changed.length) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(tx, id, baseId);
      });
    },

    async remove(id: string, baseId: string): Promise<PluginView> {
      return store.transaction(async (tx) => {
        await row(tx, id);
        const removed = await tx.db.delete(pluginInstallations).where(where(id, baseId)).returning({ pluginId: pluginInstallations.pluginId });
        if (!removed.length) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(tx, id, baseId);
      });
    },
  };
}

export type Installations = ReturnType<typeof createInstallations>;
