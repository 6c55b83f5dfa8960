// Signed loader URLs for one opening of a ui plugin (10 minutes), and the context each opening hands the plugin.
import { randomBytes } from 'node:crypto';
import type { UrlSigner } from '../../auth/url-signer.js';
import { isObject } from '../../checks.js';
import type { CurrentPlugin } from './catalog.js';
import { invalidParams } from './shared.js';

const TTL_SECONDS = 600;
const MAX_SELECTION = 1000;

export interface SandboxRequest {
  baseId: string;
  tableId?: string | null;
  recordId?: string | null;
  extensionPoint: string;
  selection?: unknown;
}

export interface SandboxUrl {
  url: string;
  expiresAt: string;
  handshakeToken: string;
  context: Record<string, unknown>;
  permissions: Record<string, unknown>;
}

/** Spec 3, 2.5: ids only, at most 1000, with the real total and whether it was cut. */
function normalizeSelection(raw: unknown) {
  if (raw === undefined || raw === null) return { recordIds: [], total: 0, truncated: false, selectAll: false, scope: 'page', at: Date.now() };
  if (!isObject(raw)) throw invalidParams('selection must be an object');
  const ids = Array.isArray(raw.recordIds) ? raw.recordIds.filter((x): x is string => typeof x === 'string') : [];
  const total = Number.isInteger(raw.total) ? Math.max(raw.total as number, ids.length) : ids.length;
  return {
    recordIds: ids.slice(0, MAX_SELECTION), total, truncated: total > MAX_SELECTION || ids.length > MAX_SELECTION, selectAll: raw.selectAll === true,
    scope: raw.scope === 'view' ? 'view' : 'page', at: Number.isInteger(raw.at) ? raw.at : Date.now(),
  };
}

export function createSandboxUrls(current: CurrentPlugin, opts: { signer: UrlSigner; publicUrl: string; tableInBase: (baseId: string, tableId: unknown) => Promise<string> }) {
  /** Context of each open sandbox (selection snapshot), by handshake token, for ui.getContext and selection.get. */
  const opens = new Map<string, { pluginId: string; baseId: string; context: Record<string, unknown>; exp: number }>();

  return {
    /** The opening's context when the token belongs to this plugin and base and has not expired. */
    openContext(handshakeToken: string | null | undefined, id: string, baseId: string): Record<string, unknown> | undefined {
      const open = typeof handshakeToken === 'string' ? opens.get(handshakeToken) : undefined;
      return open && open.pluginId === id && open.baseId === baseId && open.exp > Date.now() / 1000 ? open.context : undefined;
    },

    /** A signed loader URL; its handshake token keys the selection snapshot. The scopes have checked plugin, base and caller. */
    async sandboxUrl(id: string, req: SandboxRequest): Promise<SandboxUrl> {
      const { row, manifest } = await current(id);
      const points = (manifest.extensionPoints ?? []).map((e) => e.type);
      if (!points.some((p) => p === req.extensionPoint)) throw invalidParams(`extension_point must be one the plugin declares: ${points.join(', ')}`);
      if (req.tableId !== undefined && req.tableId !== null) await opts.tableInBase(req.baseId, req.tableId);
      const selection = normalizeSelection(req.selection);
      const ht = randomBytes(18).toString('base64url');
      const exp = Math.floor(Date.now() / 1000) + TTL_SECONDS;
      const context = {
        pluginId: id, baseId: req.baseId, tableId: req.tableId ?? null, extensionPoint: req.extensionPoint,
        recordId: req.extensionPoint === 'record-detail-block' ? (req.recordId ?? null) : null, selection,
      };
      for (const [token, o] of opens) if (o.exp * 1000 < Date.now()) opens.delete(token);
      opens.set(ht, { pluginId: id, baseId: req.baseId, context, exp });
      const sig = opts.signer.sign(['loader', id, row.currentVersion, ht], exp);
      const url = `${opts.publicUrl}/api/plugins/${encodeURIComponent(id)}/versions/${encodeURIComponent(row.currentVersion)}/loader.html?exp=${exp}&ht=${ht}&sig=${sig}`;
      return { url, expiresAt: new Date(exp * 1000).toISOString(), handshakeToken: ht, context, permissions: (manifest.permissions ?? {}) as Record<string, unknown> };
    },
  };
}
