// Checks and resolves a computed field's definition against the fields of its base: references by name become ids, a
// formula is compiled and its result type inferred, and a definition that would make a cycle is refused.
import { invalidField } from '../../errors.js';
import type { FieldDef } from '../../fields/field-type.js';
import { compileFormula, FormulaError, formulaTypeOfField, type FormulaType } from '../../fields/formula/index.js';
import type { RollupFunction } from '../../fields/types/computed.js';
import { buildGraph, CycleError } from './graph.js';

export const COMPUTED_TYPES = ['formula', 'lookup', 'rollup', 'count'];
export const isComputed = (f: Pick<FieldDef, 'type'>) => COMPUTED_TYPES.includes(f.type);

/** The formula type a field's values are read as, or undefined when a formula cannot read it. */
export const formulaTypeOf = (f: FieldDef) => formulaTypeOfField(f.type, f.config.result_type as FormulaType | undefined);

/** A field of `fields` by id, or by name ignoring case (names are unique that way in a table). */
function find(fields: FieldDef[], ref: string): FieldDef | undefined {
  return fields.find((f) => f.id === ref) ?? fields.find((f) => f.name.toLowerCase() === ref.trim().toLowerCase());
}

/** The result type of a rollup: numbers for arithmetic and counts, the target's dates for min/max of dates. */
function rollupResult(fn: RollupFunction, target: FieldDef): FormulaType {
  if (fn === 'concat') return 'text';
  if (fn === 'and' || fn === 'or') return 'boolean';
  if ((fn === 'min' || fn === 'max') && formulaTypeOf(target) === 'date') return 'date';
  return 'number';
}

/**
 * The stored config of computed field `draft` (its config as normalizeSettings left it), given every other field of the
 * base; throws a 400 naming the config key and the problem. Checks that the base's graph stays free of cycles.
 */
export function resolveComputed(draft: FieldDef, others: FieldDef[]): Record<string, unknown> {
  const own = others.filter((f) => f.tableId === draft.tableId);
  const c = draft.config;
  let config: Record<string, unknown>;
  if (draft.type === 'formula') {
    const refs = own.flatMap((f) => {
      const type = formulaTypeOf(f);
      return type ? [{ id: f.id, name: f.name, type }] : [];
    });
    try {
      const compiled = compileFormula(String(c.expression), refs);
      config = { expression: compiled.stored, result_type: compiled.resultType };
    } catch (e) {
      if (!(e instanceof FormulaError)) throw e;
      const self = new RegExp(`\\{\\s*(${draft.id}|${draft.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})\\s*\\}`);
      if (self.test(String(c.expression))) throw invalidField('config.expression', `a formula cannot read its own field ("${draft.name}"): it would make a cycle`);
      throw invalidField('config.expression', e.message);
    }
  } else {
    const link = find(own, String(c.link_field));
    if (!link) throw invalidField('config.link_field', `no field "${c.link_field}" in this table`);
    if (link.type !== 'link') throw invalidField('config.link_field', `field "${link.name}" is a ${link.type} field, not a link`);
    config = { link_field: link.id };
    if (draft.type !== 'count') {
      const linkedTable = link.config.table_id as string;
      const target = find(others.filter((f) => f.tableId === linkedTable), String(c.field));
      if (!target) throw invalidField('config.field', `no field "${c.field}" in the table that "${link.name}" links to`);
      config.field = target.id;
      if (draft.type === 'rollup') {
        config.function = c.function;
        config.result_type = rollupResult(c.function as RollupFunction, target);
      }
    }
  }
  const resolved = { ...draft, config };
  try {
    buildGraph([...others.filter((f) => f.id !== draft.id), resolved]);
  } catch (e) {
    if (e instanceof CycleError) throw invalidField(draft.type === 'formula' ? 'config.expression' : draft.type === 'count' ? 'config.link_field' : 'config.field', e.message);
    throw e;
  }
  return config;
}
