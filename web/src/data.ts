// Types and GraphQL loaders shared by the administration and workflow pages (bases, tables, fields, records, plugins).
import { gql } from './api';

export interface BaseRef { id: string; name: string; role?: string }
export interface TableRef { id: string; name: string; baseId: string }
export interface FieldRef { id: string; name: string; type: string; options: string[] | null; required: boolean; config: Record<string, unknown> }
export interface RecordRef { id: string; fields: Record<string, unknown>; createdAt: string }

export interface PluginInfo {
  id: string;
  name: string;
  description: string;
  author: { name?: string; url?: string; email?: string } | null;
  type: 'ui' | 'script';
  version: string;
  versions: Array<{ version: string; uploadedAt: string }>;
  status: 'enabled' | 'disabled' | 'error';
  consecutiveFailures: number;
  permissions: Record<string, unknown>;
  extensionPoints: Array<{ type: string; title?: string; icon?: string; requiresSelection?: boolean; maxSelection?: number }>;
  endpoints: Array<{ name: string; entry: string; description?: string; timeout?: number }>;
  configSchema: Record<string, unknown> | null;
  installation: { installed: boolean; enabled: boolean } | null;
  createdAt: string;
  updatedAt: string;
}

export const PLUGIN_FIELDS = 'id name description author type version versions status consecutiveFailures permissions extensionPoints endpoints configSchema installation createdAt updatedAt';

/** Field types computed from other fields (contract section 12): read-only, but their changes fire record_updated. */
export const COMPUTED_TYPES = new Set(['formula', 'lookup', 'rollup', 'count']);
/** Field types whose values the service sets itself: nothing writes them. */
export const READ_ONLY_TYPES = new Set(['created_time', 'last_modified_time', 'autonumber', ...COMPUTED_TYPES]);

/** Every base the signed-in user can open (all of them for a system administrator). */
export async function loadBases(): Promise<BaseRef[]> {
  const d = await gql<{ bases: { items: BaseRef[] } }>('{ bases(pageSize: 1000) { items { id name role } } }');
  return d.bases.items;
}

export async function loadTables(baseId: string): Promise<TableRef[]> {
  const d = await gql<{ tables: { items: TableRef[] } }>('query T($b: ID) { tables(baseId: $b, pageSize: 1000) { items { id name baseId } } }', { b: baseId });
  return d.tables.items;
}

const fieldCache = new Map<string, Promise<FieldRef[]>>();
/** The fields of a table (cached for the page's lifetime; `fresh` reloads). */
export function loadFields(tableId: string, fresh = false): Promise<FieldRef[]> {
  if (fresh || !fieldCache.has(tableId)) {
    const p = gql<{ fields: { items: FieldRef[] } }>('query F($t: ID!) { fields(tableId: $t, pageSize: 1000) { items { id name type options required config } } }', { t: tableId })
      .then((d) => d.fields.items);
    p.catch(() => fieldCache.delete(tableId));
    fieldCache.set(tableId, p);
  }
  return fieldCache.get(tableId)!;
}

export async function loadRecords(tableId: string, pageSize = 25, q = ''): Promise<{ items: RecordRef[]; total: number }> {
  if (q.trim()) {
    const d = await gql<{ searchRecords: { items: RecordRef[]; total: number } }>(
      'query S($t: ID!, $q: String!, $n: Int) { searchRecords(tableId: $t, q: $q, pageSize: $n) { items { id fields createdAt } total } }', { t: tableId, q, n: pageSize });
    return d.searchRecords;
  }
  const d = await gql<{ records: { items: RecordRef[]; total: number } }>(
    'query R($t: ID!, $n: Int) { records(tableId: $t, pageSize: $n) { items { id fields createdAt } total } }', { t: tableId, n: pageSize });
  return d.records;
}

export async function loadPlugins(baseId?: string | null): Promise<PluginInfo[]> {
  const d = await gql<{ plugins: PluginInfo[] }>(`query P($b: ID) { plugins(baseId: $b) { ${PLUGIN_FIELDS} } }`, { b: baseId ?? null });
  return d.plugins;
}

/** A short human label for a record: its first text-like value, else its id. */
export function recordLabel(r: RecordRef, fields: FieldRef[]): string {
  for (const f of fields) {
    const v = r.fields[f.name];
    if (typeof v === 'string' && v.trim()) return v.length > 60 ? `${v.slice(0, 57)}…` : v;
    if (typeof v === 'number') return String(v);
  }
  return r.id;
}
