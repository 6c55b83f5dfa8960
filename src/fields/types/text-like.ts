// Shared shape of the string types (text, long_text, email, url, phone): only the length cap and format check differ.
import { convertVia, describe, noSettings, TEXT_OPERATORS, ValueError, type FieldType, type FieldTypeName } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_TEXT } from './sql.js';

export function textLike(name: FieldTypeName, maxLength: number, check?: (s: string) => string | null): FieldType {
  const type: FieldType = {
    name,
    searchable: true,
    storage: 'text',
    operators: TEXT_OPERATORS,
    filterSql: columnFilter(EMPTY_TEXT),
    sortTerms: emptiesLast,
    normalizeSettings: noSettings(name),
    toStored(value) {
      if (typeof value !== 'string') throw new ValueError(`expected a string, got ${describe(value)}`);
      if (value.length > maxLength) throw new ValueError(`text longer than ${maxLength} characters`);
      if (value === '') return null; // an empty string is an empty cell
      if (check) {
        const problem = check(value);
        if (problem) throw new ValueError(problem);
      }
      return value;
    },
    fromStored: (raw) => raw ?? null,
    // Filters compare against any string, even one that is not a valid email or url.
    filterOperand(value) {
      if (typeof value !== 'string') throw new ValueError(`expected a string, got ${describe(value)}`);
      return value;
    },
    convert: (value, field, ctx) => convertVia(type)(value, field, ctx),
  };
  return type;
}
