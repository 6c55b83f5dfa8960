// The read side of installed plugins: rows, manifests of each version, package files and the view the API answers.
import { and, asc, eq } from 'drizzle-orm';
import semver from 'semver';
import { pluginFiles, pluginInstallations, plugins, pluginVersions } from '../../db/schema.js';
import { notFound } from '../../errors.js';
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

export function createCatalog(deps: Deps) {
  const { orm } = deps;

  /** The plugin's row; 404 for an id that was never uploaded (or was uninstalled). */
  function row(id: string): PluginRow {
    const r = orm.select().from(plugins).where(eq(plugins.id, id)).get();
    if (!r) throw notFound(`Plugin ${id} not found`);
    return r;
  }

  function manifestOf(id: string, version: string): Manifest | undefined {
    const v = orm.select().from(pluginVersions).where(and(eq(pluginVersions.pluginId, id), eq(pluginVersions.version, version))).get();
    return v?.manifest as unknown as Manifest | undefined;
  }

  /** The row and the manifest of the current version (a current version is always retained). */
  function current(id: string): { row: PluginRow; manifest: Manifest } {
    const r = row(id);
    return { row: r, manifest: manifestOf(id, r.currentVersion)! };
  }

  function installationRow(id: string, baseId: string) {
    return orm.select().from(pluginInstallations).where(and(eq(pluginInstallations.pluginId, id), eq(pluginInstallations.baseId, baseId))).get();
  }

  /** What the API shows of a plugin; with a base, a ui plugin's installation there (null for script plugins). */
  function view(id: string, baseId?: string | null): PluginView {
    const { row: r, manifest: m } = current(id);
    const versions = orm.select({ version: pluginVersions.version, uploadedAt: pluginVersions.uploadedAt }).from(pluginVersions)
      .where(eq(pluginVersions.pluginId, id)).all().sort((a, b) => semver.rcompare(a.version, b.version));
    let installation: PluginView['installation'];
    if (baseId) {
      if (r.type === 'ui') {
        const inst = installationRow(id, baseId);
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

    /** Every plugin in upload order. */
    list(baseId?: string | null): PluginView[] {
      return orm.select({ id: plugins.id }).from(plugins).orderBy(asc(plugins.createdAt)).all().map((p) => view(p.id, baseId));
    },

    /** One file of a version, for the loader and signed file URLs. */
    file(id: string, version: string, path: string): Buffer | undefined {
      return orm.select({ content: pluginFiles.content }).from(pluginFiles)
        .where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version), eq(pluginFiles.path, path))).get()?.content;
    },

    filesOf(id: string, version: string): string[] {
      return orm.select({ path: pluginFiles.path }).from(pluginFiles).where(and(eq(pluginFiles.pluginId, id), eq(pluginFiles.version, version))).all().map((f) => f.path);
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
