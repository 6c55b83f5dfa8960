// Which field types a formula can reference, and as which formula type their API values are read.
import type { FormulaType } from './values.js';

/**
 * The formula type of each referenceable field type. Multi-valued types (multi_select, link, lookup) read as text:
 * their elements' text joined with ", " (link values are record ids), blank when there is none.
 */
const TYPE_OF_FIELD: Readonly<Record<string, FormulaType>> = {
  text: 'text', long_text: 'text', email: 'text', url: 'text', phone: 'text', single_select: 'text', user: 'text',
  multi_select: 'text', link: 'text', lookup: 'text',
  number: 'number', rating: 'number', autonumber: 'number', count: 'number',
  checkbox: 'boolean',
  date: 'date', created_time: 'date', last_modified_time: 'date',
};

/**
 * The formula type a field of type `fieldType` is read as, or undefined when it cannot be referenced. For `formula`
 * and `rollup` fields it is their result type, which the caller passes (`config.result_type` of a formula; a rollup's
 * by its function: number unless told otherwise).
 */
export function formulaTypeOfField(fieldType: string, resultType?: FormulaType): FormulaType | undefined {
  if (fieldType === 'formula') return resultType;
  if (fieldType === 'rollup') return resultType ?? 'number';
  return Object.hasOwn(TYPE_OF_FIELD, fieldType) ? TYPE_OF_FIELD[fieldType] : undefined;
}
