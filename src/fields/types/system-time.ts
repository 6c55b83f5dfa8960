// Shared shape of the read-only timestamps created_time and last_modified_time.
import { noSettings, ORDERED_OPERATORS, ValueError, type FieldType, type FieldTypeName, type SystemColumn } from '../field-type.js';
import { dateOperand } from './date.js';
import { columnFilter, NEVER_EMPTY, plainSort } from './sql.js';

export function systemTime(name: FieldTypeName, column: SystemColumn): FieldType {
  return {
    name,
    storage: 'system',
    systemColumn: column,
    readOnly: true,
    operators: ORDERED_OPERATORS,
    filterSql: columnFilter(NEVER_EMPTY),
    sortTerms: plainSort,
    normalizeSettings: noSettings(name),
    toStored() {
      throw new ValueError(`${name} is read-only`);
    },
    fromStored: (raw) => raw,
    filterOperand: (value) => dateOperand(value),
    convert: () => null,
  };
}
