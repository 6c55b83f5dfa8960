// Types shared between the pages and the plugin host: extension points and the selection snapshot (spec 3, 2.5).
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
