// Plugin packages and their life: uploads (new plugins and higher versions), status, rollback, uninstall, failure counting.
import { eq } from 'drizzle-orm';
import semver from 'semver';
import { first, type UnitOfWork } from '../../db/store.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import { nowIso } from '../../ids.js';
import { MAX_UPLOAD_BYTES } from '../../limits.js';
import { readPackage, PackageError } from '../../../plugins-runtime/package-reader.js';
import type { Deps } from '../deps.js';
import type { Catalog, PluginView } from './catalog.js';

/** Failed runs or calls in a row that put an enabled plugin in `error` (it keeps working; an administrator restores it). */
export const FAILURES_TO_ERROR = 5;

export type StatusAction = 'enable' | 'disable' | 'restore';

export function createPackages(deps: Deps, catalog: Catalog, hostVersion: string) {
  const { store } = deps;
  const { plugins, pluginVersions, pluginFiles } = store.schema;
  const { row, view } = catalog;

  /** Counts one outcome in the caller's unit of work; the fifth failure in a row puts an enabled plugin in `error`. */
  async function countOutcome(uow: UnitOfWork, id: string, failed: boolean): Promise<void> {
    const r = await first(uow.db.select().from(plugins).where(eq(plugins.id, id)).limit(1));
    if (!r) return;
    const failures = failed ? r.consecutiveFailures + 1 : 0;
    const status = failed && failures >= FAILURES_TO_ERROR && r.status === 'enabled' ? 'error' : r.status;
    await uow.db.update(plugins).set({ consecutiveFailures: failures, status }).where(eq(plugins.id, id));
  }

  return {
    /** A .stplugin.zip (a Buffer from REST, base64 over /graphql): a first upload (disabled), or a higher version of a plugin. */
    async upload(zip: unknown): Promise<PluginView> {
      const buffer = Buffer.isBuffer(zip) ? zip : typeof zip === 'string' ? Buffer.from(zip, 'base64') : null;
      if (!buffer || buffer.length === 0) throw badRequest('The upload holds no package: send multipart/form-data with a "file" part, or an application/zip body');
      if (buffer.length > MAX_UPLOAD_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `A package may be at most ${MAX_UPLOAD_BYTES} bytes`);
      let pkg: Awaited<ReturnType<typeof readPackage>>;
      try {
        pkg = await readPackage(buffer, { hostVersion });
      } catch (e) {
        if (e instanceof PackageError) {
          throw new AppError('INVALID_PACKAGE', `The package is invalid: ${e.problems.length} problem(s)`, {
            details: e.problems.map((p) => ({ path: p.path, message: p.message })),
          });
        }
        throw e;
      }
      const { manifest, files } = pkg;
      // The package was read and checked above, before the transaction: only the writes hold the write lock.
      return store.transaction(async (tx) => {
        const existing = await first(tx.db.select().from(plugins).where(eq(plugins.id, manifest.id)).limit(1));
        const now = nowIso();
        if (existing) {
          if (existing.type !== manifest.type) throw conflict(`Plugin ${manifest.id} is a ${existing.type} plugin; a new version cannot change its type`);
          const highest = (await tx.db.select({ version: pluginVersions.version }).from(pluginVersions).where(eq(pluginVersions.pluginId, manifest.id)))
            .map((v) => v.version).sort(semver.rcompare)[0];
          if (!semver.gt(manifest.version, highest)) {
            throw new AppError('VERSION_NOT_HIGHER', `Version ${manifest.version} is not higher than ${highest}, the highest version of ${manifest.id}`);
          }
          await tx.db.update(plugins).set({ currentVersion: manifest.version, updatedAt: now }).where(eq(plugins.id, manifest.id));
        } else {
          // A first upload waits for an administrator to enable it.
          await tx.db.insert(plugins).values({ id: manifest.id, type: manifest.type, currentVersion: manifest.version, status: 'disabled', createdAt: now, updatedAt: now });
        }
        await tx.db.insert(pluginVersions).values({ pluginId: manifest.id, version: manifest.version, manifest: manifest as unknown as Record<string, unknown>, uploadedAt: now });
        for (const [path, content] of files) await tx.db.insert(pluginFiles).values({ pluginId: manifest.id, version: manifest.version, path, content });
        return view(tx, manifest.id);
      });
    },

    /** enable, disable, or restore (only from `error`); enabling or restoring clears the failure count. */
    async setStatus(id: string, action: string): Promise<PluginView> {
      if (action !== 'enable' && action !== 'disable' && action !== 'restore') throw badRequest('action must be enable, disable or restore', [{ field: 'action', message: 'must be enable, disable or restore' }]);
      return store.transaction(async (tx) => {
        const r = await row(tx, id);
        if (action === 'restore' && r.status !== 'error') throw conflict(`Plugin ${id} is ${r.status}; only a plugin in error can be restored`);
        const status = action === 'disable' ? 'disabled' : 'enabled';
        const resetFailures = action !== 'disable';
        await tx.db.update(plugins).set({ status, ...(resetFailures ? { consecutiveFailures: 0 } : {}), updatedAt: nowIso() }).where(eq(plugins.id, id));
        return view(tx, id);
      });
    },

    /** Makes a retained version current; status, configuration and installations stay. */
    async rollback(id: string, version: string | null | undefined): Promise<PluginView> {
      if (typeof version !== 'string' || !version) throw badRequest('version is required', [{ field: 'version', message: 'required' }]);
      return store.transaction(async (tx) => {
        const r = await row(tx, id);
        if (!(await catalog.manifestOf(tx, id, version))) throw notFound(`Version ${version} of plugin ${id} is not retained`);
        if (r.currentVersion === version) throw conflict(`Version ${version} is already current`);
        await tx.db.update(plugins).set({ currentVersion: version, updatedAt: nowIso() }).where(eq(plugins.id, id));
        return view(tx, id);
      });
    },

    async uninstall(id: string): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        await row(tx, id);
        await tx.db.delete(pluginFiles).where(eq(pluginFiles.pluginId, id));
        await tx.db.delete(plugins).where(eq(plugins.id, id)); // versions, config, installations and storage cascade
        return { id, deleted: true as const };
      });
    },

    countOutcome,

    /** Counts a failed run or call in a transaction of its own; the fifth in a row puts the plugin in `error` (it keeps working). */
    async recordOutcome(id: string, failed: boolean): Promise<void> {
      await store.transaction((tx) => countOutcome(tx, id, failed));
    },
  };
}
