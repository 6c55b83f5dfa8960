// Base installations of ui plugins, and whether a plugin may be used in a base at all.
import { and, eq } from 'drizzle-orm';
import { pluginInstallations } from '../../db/schema.js';
import { writeTransaction } from '../../db/connection.js';
import { badRequest, notFound } from '../../errors.js';
import { nowIso } from '../../ids.js';
import type { Deps } from '../deps.js';
import type { Catalog, PluginView } from './catalog.js';

export function createInstallations(deps: Deps, catalog: Catalog) {
  const { sqlite, orm } = deps;
  const { row, view } = catalog;
  const where = (id: string, baseId: string) => and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId));

  /** Only ui plugins are installed: a script plugin runs in any base its caller may edit. */
  function uiOnly(id: string) {
    if (row(id).type !== 'ui') throw badRequest(`Plugin ${id} is a script plugin: only ui plugins are installed in bases`);
  }

  return {
    /**
     * Whether the current version may be used in a base: script plugins always; ui plugins when installed and enabled
     * there, or anywhere when they have a home-menu extension point (global, no installation).
     */
    usableInBase(id: string, baseId: string): boolean {
      const { manifest } = catalog.current(id);
      if (manifest.type !== 'ui') return true;
      if ((manifest.extensionPoints ?? []).some((e) => e.type === 'home-menu')) return true;
      return !!catalog.installationRow(id, baseId)?.enabled;
    },

    async install(id: string, baseId: string, enabled = true): Promise<PluginView> {
      return writeTransaction(sqlite, () => {
        uiOnly(id);
        orm.insert(pluginInstallations).values({ pluginId: id, baseId, enabled, createdAt: nowIso() })
          .onConflictDoUpdate({ target: [pluginInstallations.pluginId, pluginInstallations.baseId], set: { enabled } }).run();
        return view(id, baseId);
      });
    },

    async setEnabled(id: string, baseId: string, enabled: boolean): Promise<PluginView> {
      return writeTransaction(sqlite, () => {
        uiOnly(id);
        const changed = orm.update(pluginInstallations).set({ enabled }).where(where(id, baseId)).run().changes;
        if (!changed) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(id, baseId);
      });
    },

    async remove(id: string, baseId: string): Promise<PluginView> {
      return writeTransaction(sqlite, () => {
        row(id);
        const removed = orm.delete(pluginInstallations).where(where(id, baseId)).run().changes;
        if (!removed) throw notFound(`Plugin ${id} is not installed in base ${baseId}`);
        return view(id, baseId);
      });
    },
  };
}

export type Installations = ReturnType<typeof createInstallations>;
