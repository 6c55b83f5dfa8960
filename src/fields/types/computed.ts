// formula, lookup, rollup and count (contract section 12): read-only types whose values the service computes and stores
// in a column, so filters, sorts and indexes treat them like the type of their result.
import { describe, rejectUnknownKeys, SET_OPERATORS, ValueError, type FieldDef, type FieldType, type FieldTypeName } from '../field-type.js';
import type { FormulaType } from '../formula/index.js';
import { checkbox } from './checkbox.js';
import { date } from './date.js';
import { multiSelect } from './multi-select.js';
import { number } from './number.js';
import { emptiesLast } from './sql.js';
import { text } from './text.js';

export const ROLLUP_FUNCTIONS = ['sum', 'avg', 'min', 'max', 'count', 'counta', 'concat', 'and', 'or'] as const;
export type RollupFunction = (typeof ROLLUP_FUNCTIONS)[number];

/** What a computed field's definition names before the service resolves it (domain/computed/definitions.ts). */
function shape(type: string, keys: string[], required: string[]) {
  return (options: unknown, config: Record<string, unknown>) => {
    if (options !== undefined && options !== null) throw new ValueError(`options are only for select fields, not ${type}`);
    rejectUnknownKeys(config, [...keys, 'result_type']);
    for (const key of required) {
      if (typeof config[key] !== 'string' || !(config[key] as string).trim()) throw new ValueError(`config.${key} is required: ${describe(config[key])} given`);
    }
    const out: Record<string, unknown> = {};
    for (const key of keys) if (config[key] !== undefined) out[key] = config[key];
    return { options: null, config: out };
  };
}

/** The parts every computed type shares; `valuesAs` gives the behaviour of its values. */
function computedType(name: FieldTypeName, normalizeSettings: FieldType['normalizeSettings'], valuesAs: (field: FieldDef) => FieldType): FieldType {
  return {
    ...text,
    name,
    readOnly: true,
    computed: true,
    searchable: false,
    normalizeSettings,
    toStored() {
      throw new ValueError(`a ${name} field is computed by the service`);
    },
    convert: () => null,
    valuesAs,
  };
}

/** A result type's behaviour under a computed type's name: storage, operators, sorts and API form of `base`. */
function behaviour(name: FieldTypeName, base: FieldType, overrides: Partial<FieldType> = {}): FieldType {
  return { ...base, name, readOnly: true, computed: true, searchable: false, convert: () => null, ...overrides };
}

function resultBehaviours(name: FieldTypeName): Record<FormulaType, FieldType> {
  return {
    number: behaviour(name, number),
    text: behaviour(name, text),
    // A value that cannot be computed reads null, not the unchecked false of a checkbox.
    boolean: behaviour(name, checkbox, { fromStored: (raw) => (raw == null ? null : raw === 1) }),
    date: behaviour(name, date),
  };
}

const formulaResults = resultBehaviours('formula');
const rollupResults = resultBehaviours('rollup');
const resultType = (field: FieldDef): FormulaType => (field.config.result_type as FormulaType | undefined) ?? 'text';

export const formula = computedType('formula', shape('formula', ['expression'], ['expression']), (f) => formulaResults[resultType(f)]);

/** An array of the linked records' values, stored as JSON; filtered with has_* like a multi_select. */
const lookupValues = behaviour('lookup', multiSelect, {
  operators: SET_OPERATORS,
  sortTerms: emptiesLast,
  fromStored: (raw) => (raw == null ? [] : JSON.parse(raw as string)),
  filterOperand(value) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new ValueError(`expected a string, number or boolean, got ${describe(value)}`);
    return value;
  },
});
export const lookup = computedType('lookup', shape('lookup', ['link_field', 'field'], ['link_field', 'field']), () => lookupValues);

export const rollup = computedType('rollup', (options, config) => {
  const s = shape('rollup', ['link_field', 'field', 'function'], ['link_field', 'field', 'function'])(options, config);
  if (!(ROLLUP_FUNCTIONS as readonly unknown[]).includes(s.config.function)) {
    throw new ValueError(`config.function must be one of ${ROLLUP_FUNCTIONS.join(', ')}`);
  }
  return s;
}, (f) => rollupResults[resultType(f)]);

/** With no link a count is 0, never empty. */
const countValues = behaviour('count', number, { fromStored: (raw) => (raw == null ? 0 : raw) });
export const count = computedType('count', shape('count', ['link_field'], ['link_field']), () => countValues);

/** The value a computed field stores for an evaluated result (null: blank). */
export function storedOfResult(field: FieldDef, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (field.type === 'lookup') return Array.isArray(value) && value.length ? JSON.stringify(value) : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value === '') return null;
  return value;
}
