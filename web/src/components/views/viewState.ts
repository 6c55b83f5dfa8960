// Views as the web app holds them (contract section 13), their GraphQL documents, and the stored filter read back into the filter builder's state.
import { gql } from '../../api';
import type { FieldDef } from '../fieldTypes';
import type { FilterCondition, FilterState, SortKey } from '../filters';

export type ViewKind = 'grid' | 'form' | 'kanban' | 'gallery' | 'calendar';
export interface ViewDef {
  id: string;
  tableId: string;
  name: string;
  type: ViewKind;
  filter: { conjunction: 'and' | 'or'; conditions: any[] } | null;
  sort: Array<{ field: string; direction: 'asc' | 'desc' }> | null;
  hiddenFields: string[];
  fieldOrder: string[];
  config: Record<string, any>;
  personal: boolean;
  locked: boolean;
  createdBy: string | null;
  shareId: string | null;
}

export const VIEW = 'id tableId name type filter sort hiddenFields fieldOrder config personal locked createdBy shareId';
export const VIEW_TYPES: Array<{ type: ViewKind; label: string; icon: string }> = [
  { type: 'grid', label: 'Grid', icon: '▦' },
  { type: 'kanban', label: 'Kanban', icon: '▥' },
  { type: 'gallery', label: 'Gallery', icon: '▣' },
  { type: 'calendar', label: 'Calendar', icon: '▤' },
  { type: 'form', label: 'Form', icon: '✎' },
];

export const loadViews = async (tableId: string) =>
  (await gql<{ views: ViewDef[] }>(`query TableViews($t: ID!) { views(tableId: $t) { ${VIEW} } }`, { t: tableId })).views;
export const updateView = async (id: string, input: Record<string, unknown>) =>
  (await gql<{ updateView: ViewDef }>(`mutation UpdateView($id: ID!, $input: ViewInput!) { updateView(id: $id, input: $input) { ${VIEW} } }`, { id, input })).updateView;
export const createView = async (tableId: string, input: Record<string, unknown>) =>
  (await gql<{ createView: ViewDef }>(`mutation CreateView($t: ID!, $input: ViewInput!) { createView(tableId: $t, input: $input) { ${VIEW} } }`, { t: tableId, input })).createView;

/** The fields a view shows, in its order, without its hidden ones. */
export function visibleFields(v: ViewDef | null, fields: FieldDef[]): FieldDef[] {
  if (!v) return fields;
  const byId = new Map(fields.map((f) => [f.id, f]));
  const ordered = [...v.fieldOrder.filter((id) => byId.has(id)).map((id) => byId.get(id)!), ...fields.filter((f) => !v.fieldOrder.includes(f.id))];
  return ordered.filter((f) => !v.hiddenFields.includes(f.id));
}

let seq = 100000;
/** The stored filter (fields by id, groups one level deep as the builder makes them) as the builder's state. */
export function filterStateOf(v: ViewDef): FilterState {
  const cond = (c: any): FilterCondition => ({ kind: 'cond', key: ++seq, fieldId: c.field, op: c.operator, value: c.value ?? null });
  if (!v.filter || !Array.isArray(v.filter.conditions)) return { conjunction: 'and', items: [] };
  return {
    conjunction: v.filter.conjunction,
    items: v.filter.conditions.map((c: any) => ('field' in c ? cond(c) : { kind: 'group' as const, key: ++seq, conjunction: c.conjunction, items: c.conditions.filter((x: any) => 'field' in x).map(cond) })),
  };
}
export const sortStateOf = (v: ViewDef): SortKey[] => (v.sort ?? []).map((k) => ({ fieldId: k.field, direction: k.direction }));
