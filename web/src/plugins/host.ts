// Plugin host logic without DOM: which ui plugins show at a point, when an entry is disabled, the selection snapshot and opening a sandbox.
import { rest } from '../api';
import { PLUGINS_CHANGED_EVENT, type ExtensionPoint, type ExtensionPointType, type PluginInfo, type SandboxOpen, type SelectionSnapshot } from './types';

/** Spec 3, 2.5 and 8: at most 1000 ids are passed per open. */
export const MAX_SELECTION_IDS = 1000;

/** One entry a PluginEntries renders: the plugin and the manifest item of its point. */
export interface PluginEntry {
  plugin: PluginInfo;
  point: ExtensionPoint;
  /** How it opens: a toolbar-button paired with a side-panel opens a drawer; blocks open inline; the rest a dialog. */
  opens: 'drawer' | 'dialog' | 'inline';
}

// ---- The list, shared by the PluginEntries of a page (one request per base; a page shown later asks again). ----

const LIST_TTL_MS = 2_000;
const lists = new Map<string, { at: number; promise: Promise<PluginInfo[]> }>();

/** Forgets the cached lists: the next PluginEntries render asks the server again. */
export function invalidatePluginLists() {
  lists.clear();
}
if (typeof window !== 'undefined') window.addEventListener(PLUGINS_CHANGED_EVENT, invalidatePluginLists);

/** `GET /api/plugins?base_id=` (or without a base for home-menu), deduplicated across the components of a page. */
export function fetchPlugins(baseId: string | null): Promise<PluginInfo[]> {
  const key = baseId ?? '';
  const hit = lists.get(key);
  if (hit && Date.now() - hit.at < LIST_TTL_MS) return hit.promise;
  const promise = rest<PluginInfo[]>('GET', baseId ? `/api/plugins?base_id=${encodeURIComponent(baseId)}` : '/api/plugins');
  lists.set(key, { at: Date.now(), promise });
  // A failed answer must not stick for the whole TTL.
  promise.catch(() => {
    if (lists.get(key)?.promise === promise) lists.delete(key);
  });
  return promise;
}

/**
 * The entries of one point (spec 3, 2.3 and section 3): ui plugins that are globally usable (enabled, or in `error`,
 * where a plugin keeps working) and, except for home-menu, installed and enabled in the base. A plugin declaring
 * home-menu is global on the server (no installation needed), so it is treated the same at its other points.
 * side-panel has no entry of its own: it opens from its toolbar-button.
 */
export function entriesFor(plugins: PluginInfo[], point: ExtensionPointType, baseId: string | null): PluginEntry[] {
  if (point === 'side-panel') return [];
  const out: PluginEntry[] = [];
  for (const plugin of plugins) {
    if (plugin.type !== 'ui' || plugin.status === 'disabled') continue;
    const points = Array.isArray(plugin.extension_points) ? plugin.extension_points : [];
    const item = points.find((p) => p && p.type === point);
    if (!item) continue;
    const global = points.some((p) => p?.type === 'home-menu');
    if (point !== 'home-menu' && !global) {
      if (!baseId || !plugin.installation?.installed || !plugin.installation.enabled) continue;
    }
    let opens: PluginEntry['opens'] = 'dialog';
    if (point === 'toolbar-button' && points.some((p) => p?.type === 'side-panel')) opens = 'drawer';
    else if (point === 'record-detail-block' || point === 'dashboard-widget') opens = 'inline';
    out.push({ plugin, point: item, opens });
  }
  return out;
}

// ---- Selection ----

/** The snapshot sent on open: ids only (strings, no duplicates), at most 1000, `total` the real count, `truncated` when cut. */
export function normalizeSelection(raw: SelectionSnapshot | null | undefined, now = Date.now()): SelectionSnapshot {
  if (!raw || typeof raw !== 'object') return { recordIds: [], total: 0, truncated: false, selectAll: false, scope: 'page', at: now };
  const ids = [...new Set((Array.isArray(raw.recordIds) ? raw.recordIds : []).filter((x): x is string => typeof x === 'string' && x !== ''))];
  const recordIds = ids.slice(0, MAX_SELECTION_IDS);
  const total = Math.max(Number.isInteger(raw.total) ? raw.total : 0, ids.length);
  return {
    recordIds,
    total,
    truncated: total > recordIds.length || raw.truncated === true,
    selectAll: raw.selectAll === true,
    scope: raw.scope === 'view' ? 'view' : 'page',
    at: Number.isFinite(raw.at) && raw.at > 0 ? raw.at : now,
  };
}

/** Why an entry is disabled (spec 3, 2.3: requiresSelection, maxSelection), or null when it can open. */
export function disabledReason(point: ExtensionPoint, ticked: number): string | null {
  if (point.requiresSelection && ticked === 0) return 'Tick records first';
  const max = point.maxSelection;
  if (typeof max === 'number' && max >= 1 && ticked > max) return `Tick at most ${max} record${max === 1 ? '' : 's'}`;
  return null;
}

// ---- Opening ----

export interface OpenRequest {
  pluginId: string;
  baseId: string;
  tableId: string | null;
  recordId: string | null;
  extensionPoint: ExtensionPointType;
  selection: SelectionSnapshot;
}

/** `POST /api/plugins/{id}/sandbox-url`: a signed loader URL, the per-open handshake token, and what the handshake passes. */
export async function openSandbox(req: OpenRequest): Promise<SandboxOpen> {
  const open = await rest<SandboxOpen>('POST', `/api/plugins/${encodeURIComponent(req.pluginId)}/sandbox-url`, {
    base_id: req.baseId,
    table_id: req.tableId,
    record_id: req.recordId,
    extension_point: req.extensionPoint,
    selection: req.selection as unknown as Record<string, unknown>,
  });
  // The frame gets exactly this URL; refuse anything that is not a plain http(s) URL (a javascript: URL would run in the host).
  const url = new URL(open.url, window.location.href);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`The server answered an unexpected sandbox URL (${url.protocol})`);
  if (typeof open.handshake_token !== 'string' || open.handshake_token.length < 16) throw new Error('The server answered no handshake token');
  return { ...open, url: url.toString() };
}
