// Types shared between the pages and the plugin host: extension points, the selection snapshot (spec 3, 2.5) and the host's events.
export type ExtensionPointType = 'toolbar-button' | 'side-panel' | 'base-menu' | 'record-detail-block' | 'home-menu' | 'dashboard-widget';

export interface SelectionSnapshot {
  /** Ticked record ids, at most 1000. */
  recordIds: string[];
  /** The real number of ticked records. */
  total: number;
  truncated: boolean;
  selectAll: boolean;
  scope: 'page' | 'view';
  /** Snapshot time in milliseconds. */
  at: number;
}

/** One item of a manifest's `extensionPoints`. */
export interface ExtensionPoint {
  type: ExtensionPointType;
  title?: string;
  icon?: string;
  requiresSelection?: boolean;
  maxSelection?: number;
}

/** The fields of `GET /api/plugins?base_id=` the host uses. */
export interface PluginInfo {
  id: string;
  name: string;
  description: string;
  type: 'ui' | 'script';
  version: string;
  status: 'enabled' | 'disabled' | 'error';
  permissions: Record<string, unknown>;
  extension_points: ExtensionPoint[];
  installation?: { installed: boolean; enabled: boolean } | null;
}

/** `POST /api/plugins/{id}/sandbox-url` answer. */
export interface SandboxOpen {
  url: string;
  expires_at: string;
  handshake_token: string;
  context: Record<string, unknown>;
  permissions: Record<string, unknown>;
}

/**
 * Dispatched on `window` after a plugin's record.create/update/delete succeeded, so a grid showing that table can
 * reload: `window.addEventListener(RECORDS_CHANGED_EVENT, (e) => e.detail.tableId ...)`.
 */
export const RECORDS_CHANGED_EVENT = 'table-service:records-changed';

export interface RecordsChangedDetail {
  /** The table the plugin was opened on (null when it was opened outside a table). */
  tableId: string | null;
  baseId: string;
  pluginId: string;
  method: 'record.create' | 'record.update' | 'record.delete';
  /** The record written, when the call named or returned one. */
  recordId: string | null;
}

/** Dispatch it on `window` after plugins were uploaded, enabled or (un)installed so the entries reload at once. */
export const PLUGINS_CHANGED_EVENT = 'table-service:plugins-changed';
