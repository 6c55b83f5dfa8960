// The read side of installed plugins: rows, manifests of each version, package files and the view the API answers.
import { and, asc, eq, sql } from 'drizzle-orm';
import semver from 'semver';
import type { plugins } from '../../db/schema.js';
import { first, type UnitOfWork } from '../../db/store.js';
import { AppError, notFound } from '../../errors.js';
import type { Manifest } from '../../../plugins-runtime/manifest.js';
import type { Deps } from '../deps.js';

export type PluginStatus = 'enabled' | 'disabled' | 'error';

export interface PluginView {
  id: string;
  name: string;
  description: string;
  author: Record<string, unknown>;
  type: 'ui' | 'script';
  version: string;
  versions: Array<{ version: string; uploadedAt: string }>;
  status: PluginStatus;
  consecutiveFailures: number;
  permissions: Record<string, unknown>;
  extensionPoints: unknown[];
  endpoints: unknown[];
  configSchema: unknown;
  createdAt: string;
  updatedAt: string;
  installation?: { installed: boolean; enabled: boolean } | null;
}

export type PluginRow = typeof plugins.$inferSelect;

/** A plugin's row and the manifest of its current version, read outside transactions (sandbox URLs, proxy, scopes). */
export type CurrentPlugin = (id: string) => Promise<{ row: PluginRow; manifest: Manifest }>;

// Helpers that may run inside a caller's transaction take the unit of work first (`tx` inside, `deps.store` outside).
export function createCatalog(deps: Deps) {
  const { store } = deps;
  const { plugins, pluginVersions, pluginFiles, pluginInstallations } = store.schema;

  /** The plugin's row; 404 for an id that was never uploaded (or was uninstalled). */
  async function row(uow: UnitOfWork, id: string): Promise<PluginRow> {
    const r = await first(uow.db.select().from(plugins).where(eq(plugins.id, id)).limit(1));
    if (!r) throw notFound(`Plugin ${id} not found`);
    return r;
  }

  async function manifestOf(uow: UnitOfWork, id: string, version: string): Promise<Manifest | undefined> {
    const v = await first(uow.db.select().from(pluginVersions).where(and(eq(pluginVersions.pluginId, id), eq(pluginVersions.version, version))).limit(1));
    return v?.manifest as unknown as Manifest | undefined;
  }

  /** The row and the manifest of its current version in one read, so an uninstall or rollback never falls between. */
  const currentQuery = (db: UnitOfWork['db']) => db.select({ row: plugins, manifest: pluginVersions.manifest }).from(plugins)
    .innerJoin(pluginVersions, and(eq(pluginVersions.pluginId, plugins.id), eq(pluginVersions.version, plugins.currentVersion)));
  // The plugin scopes read it several times for every plugin call: prepared once, for reads outside transactions.
  const currentPrepared = currentQuery(store.db).where(eq(plugins.id, sql.placeholder('id'))).limit(1).prepare();

  /** The row and the manifest of the current version (a current version is always retained); 404 like `row`. */
  async function current(uow: UnitOfWork, id: string): Promise<{ row: PluginRow; manifest: Manifest }> {
    const r = uow.inTransaction
      ? await first(currentQuery(uow.db).where(eq(plugins.id, id)).limit(1))
      : (await currentPrepared.execute({ id }))[0];
    if (!r) throw notFound(`Plugin ${id} not found`);
    return { row: r.row, manifest: r.manifest as unknown as Manifest };
  }

  async function installationRow(uow: UnitOfWork, id: string, baseId: string) {
    return first(uow.db.select().from(pluginInstallations).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).limit(1));
  }

  /** What the API shows of a plugin; with a base, a ui plugin's installation there (null for script plugins). */
  async function view(uow: UnitOfWork, id: string, baseId?: string | null): Promise<PluginView> {
    const { row: r, manifest: m } = await current(uow, id);
    const versions = (await uow.db.select({ version: pluginVersions.version, uploadedAt: pluginVersions.uploadedAt }).from(pluginVersions)
      .where(eq(pluginVersions.pluginId, id))).sort((a, b) => semver.rcompare(a.version, b.version));
    let installation: PluginView['installation'];
    if (baseId) {
      if (r.type === 'ui') {
        const inst = await installationRow(uow, id, baseId);
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

  return {
    row,
    current,
    manifestOf,
    installationRow,
    view,

    /** Every plugin in upload order (outside transactions: one uninstalled meanwhile is left out, not a 404). */
    async list(baseId?: string | null): Promise<PluginView[]> {
      const ids = await store.db.select({ id: plugins.id }).from(plugins).orderBy(asc(plugins.createdAt));
      const views: PluginView[] = [];
      for (const p of ids) {
        try {
          views.push(await view(store, p.id, baseId));
        } catch (e) {
          if (!(e instanceof AppError && e.code === 'NOT_FOUND')) throw e;
        }
      }
      return views;
    },

    /** One file of a version, for the loader and signed file URLs (outside transactions). */
    async file(id: string, version: string, path: string): Promise<Buffer | undefined> {
      return (await first(store.db.select({ content: pluginFiles.content }).from(pluginFiles)
        .where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version), eq(pluginFiles.path, path))).limit(1)))?.content;
    },

    /** Every file of a version by path, in one read (outside transactions): what a script run is handed. */
    async filesWithContent(id: string, version: string): Promise<Map<string, Buffer>> {
      const rows = await store.db.select({ path: pluginFiles.path, content: pluginFiles.content }).from(pluginFiles)
        .where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version)));
      return new Map(rows.map((f) => [f.path, f.content]));
    },

    /** The paths of a version's files (outside transactions). */
    async filesOf(id: string, version: string): Promise<string[]> {
      return (await store.db.select({ path: pluginFiles.path }).from(pluginFiles).where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version)))).map((f) => f.path);
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
