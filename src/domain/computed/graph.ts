// The dependency graph of a base's computed fields: which field reads which, across tables through links, in an order
// that computes every input before its readers. Built from the field definitions; a cycle is refused when a field is saved.
import type { FieldDef } from '../../fields/field-type.js';
import { displayFormula } from '../../fields/formula/index.js';

/** A lookup or rollup that reads `computed`'s input through `link`, a link field of `computed`'s table. */
export interface ThroughLink {
  computed: FieldDef;
  link: FieldDef;
}

export interface ComputedGraph {
  /** Every field of the base by id. */
  byId: Map<string, FieldDef>;
  /** The computed fields, each after every computed field it reads. */
  order: FieldDef[];
  /** Computed fields that read a field of their own record (a formula's references; the link of count, lookup, rollup). */
  readers: Map<string, FieldDef[]>;
  /** Lookups and rollups that read a field of the linked records, by that field's id. */
  throughLinks: Map<string, ThroughLink[]>;
  /** Link fields that some computed field reads, by the table they point at: deleting a record there changes them. */
  linksInto: Map<string, FieldDef[]>;
}

/** The fields a computed field reads in its own record, and the one it reads in the linked records (lookup, rollup). */
export function inputsOf(field: FieldDef): { own: string[]; linked?: string } {
  const c = field.config;
  switch (field.type) {
    case 'formula': return { own: referencedIds(String(c.expression ?? '')) };
    case 'count': return { own: [c.link_field as string] };
    case 'lookup':
    case 'rollup': return { own: [c.link_field as string], linked: c.field as string };
    default: return { own: [] };
  }
}

const referenceCache = new Map<string, string[]>();
/** The field ids a stored expression reads (every reference is stored as `{fld...}`). */
function referencedIds(expression: string): string[] {
  let ids = referenceCache.get(expression);
  if (!ids) {
    const found = new Set<string>();
    displayFormula(expression, (id) => void found.add(id));
    ids = [...found];
    if (referenceCache.size > 10_000) referenceCache.clear();
    referenceCache.set(expression, ids);
  }
  return ids;
}

const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
};

/** Thrown for a cycle: the fields on it, in reading order. */
export class CycleError extends Error {
  constructor(readonly path: FieldDef[]) {
    super(`it would make a cycle: ${path.map((f) => f.name).join(' → ')}`);
  }
}

export function buildGraph(fields: FieldDef[]): ComputedGraph {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const readers = new Map<string, FieldDef[]>();
  const throughLinks = new Map<string, ThroughLink[]>();
  const linksInto = new Map<string, FieldDef[]>();
  const computed = fields.filter((f) => ['formula', 'lookup', 'rollup', 'count'].includes(f.type));
  for (const c of computed) {
    const { own, linked } = inputsOf(c);
    for (const id of own) {
      push(readers, id, c);
      // A link read in the record (by count, lookup, rollup, or a formula as text) changes when a linked record goes.
      const input = byId.get(id);
      if (input?.type === 'link') {
        const target = input.config.table_id as string;
        if (!(linksInto.get(target) ?? []).includes(input)) push(linksInto, target, input);
      }
    }
    const link = byId.get(c.config.link_field as string);
    if (link && linked) push(throughLinks, linked, { computed: c, link });
  }
  return { byId, order: topologicalOrder(computed, byId), readers, throughLinks, linksInto };
}

/** Depth-first order of the computed fields by what they read; throws CycleError naming the loop. */
function topologicalOrder(computed: FieldDef[], byId: Map<string, FieldDef>): FieldDef[] {
  const order: FieldDef[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: FieldDef[] = [];
  const visit = (f: FieldDef) => {
    const s = state.get(f.id);
    if (s === 'done') return;
    if (s === 'visiting') throw new CycleError([...stack.slice(stack.indexOf(f)), f]);
    state.set(f.id, 'visiting');
    stack.push(f);
    const { own, linked } = inputsOf(f);
    for (const id of [...own, ...(linked ? [linked] : [])]) {
      const input = byId.get(id);
      if (input && inputsOf(input).own.length) visit(input);
    }
    stack.pop();
    state.set(f.id, 'done');
    order.push(f);
  };
  for (const f of computed) visit(f);
  return order;
}

/** The computed fields that read `fieldId` directly: in their own records, or through a link. */
export function dependentsOf(graph: ComputedGraph, fieldId: string): FieldDef[] {
  const out = new Set<FieldDef>(graph.readers.get(fieldId) ?? []);
  for (const { computed } of graph.throughLinks.get(fieldId) ?? []) out.add(computed);
  return [...out];
}
