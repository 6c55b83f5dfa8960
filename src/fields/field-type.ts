// The contract every field type module fulfils: config rules, value validation, storage, and the SQL of its filters and sorts.

export const FIELD_TYPE_NAMES = [
  'text', 'long_text', 'number', 'date', 'single_select', 'multi_select', 'checkbox', 'user', 'link',
  'email', 'url', 'phone', 'rating', 'created_time', 'last_modified_time', 'autonumber',
  'formula', 'lookup', 'rollup', 'count', 'attachment',
] as const;
export type FieldTypeName = (typeof FIELD_TYPE_NAMES)[number];

export const OPERATORS = [
  'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'not_contains', 'starts_with', 'ends_with',
  'in', 'not_in', 'has_any', 'has_all', 'has_none', 'is_empty', 'is_not_empty',
] as const;
export type Operator = (typeof OPERATORS)[number];

/**
 * How a value is stored, in terms every SQL dialect maps: `text`/`real`/`integer`/`json` are a column of the record table
 * (its SQL type is `SqlDialect.columnType`), `link` is a junction table, `system` reads one of the record table's own columns.
 */
export type Storage = 'text' | 'real' | 'integer' | 'json' | 'link' | 'system';
export type ColumnStorage = 'text' | 'real' | 'integer' | 'json';
export type SystemColumn = '_seq' | '_created_at' | '_updated_at';

/**
 * The spellings that differ between SQL engines; field types build their SQL only from these and from standard SQL
 * (`IS NULL`, `=`, `IN`, `EXISTS`, `||`, `coalesce`). Implemented by `src/db/sqlite-dialect.ts` and `src/db/pg-dialect.ts`;
 * the record store's own spellings extend it (`RecordDialect`, src/db/sql-client.ts).
 */
export interface SqlDialect {
  /** The SQL type of a record-table column. */
  columnType(storage: ColumnStorage): string;
  /**
   * The placeholder of a statement's n-th parameter (1-based) bound to `value`. A fractional number is typed as such
   * where the engine would otherwise take the type of an integer column it is compared with (PostgreSQL).
   */
  placeholder(n: number, value?: unknown): string;
  /** Conditions that are always true / always false. */
  readonly true: string;
  readonly false: string;
  /** A newline as an SQL text expression. */
  readonly newline: string;
  /** A JSON array with no element, as it is compared with a `json` column. */
  readonly emptyJsonArray: string;
  /**
   * Case-insensitive match of `expr` against a bound LIKE pattern (already lower-cased, `\` escapes `%`, `_` and `\`).
   * Only ASCII letters of `expr` are folded, on every engine, as SQLite's lower() does.
   */
  likeLower(expr: string, pattern: string): string;
  /** A FROM source of the elements of a JSON array held in `expr`, one row per element, its text in a column `value`. */
  jsonElements(expr: string): string;
  /** The aggregate joining the text of `expr` over rows with newlines. */
  joinLines(expr: string): string;
  /** ORDER BY terms of `col` in direction `dir` with NULLs last in both directions. */
  emptiesLast(col: string, dir: SortDirection): string;
}

/** The parameters of one statement being built: binding a value returns its placeholder. */
export interface SqlParams {
  readonly dialect: SqlDialect;
  bind(value: unknown): string;
  /** Binds each value; returns their placeholders separated by commas. */
  bindAll(values: readonly unknown[]): string;
}

/** One filter condition as the field type compiles it. */
export interface FilterTerm {
  op: Operator;
  /** The operand in stored form; an array for in/not_in/has_*; absent for is_empty/is_not_empty. */
  value?: unknown;
  /** The value's SQL: the column expression, or for `link` storage the junction table (`src`, `dst`, `pos`). */
  col: string;
  /** The record's id expression, which a junction table's `src` refers to. */
  recordId: string;
}

export type SortDirection = 'ASC' | 'DESC';

export interface FieldDef {
  id: string;
  tableId: string;
  name: string;
  type: FieldTypeName;
  required: boolean;
  options: string[] | null;
  config: Record<string, unknown>;
  indexed: boolean;
  /** A computed field still being filled in the background: the `_seq` its values are current up to (else null/absent). */
  fillAfterSeq?: number | null;
}

/** What a value check may need beyond the value: the members of the base, for `user` fields. */
export interface ValueContext {
  isBaseMember(userId: string): boolean;
}

/** Thrown by a field type for a bad value or config; the caller adds the field name or batch index. */
export class ValueError extends Error {}

export interface FieldType {
  name: FieldTypeName;
  storage: Storage;
  systemColumn?: SystemColumn;
  /** Set by the service; a write is refused. */
  readOnly?: boolean;
  /** Computed from other fields (formula, lookup, rollup, count): a change of its value is a change of the record. */
  computed?: boolean;
  /**
   * A computed type's values behave as another type by the field's result (a number formula filters, sorts and is
   * stored as a number); `typeOfField` in the registry applies it.
   */
  valuesAs?(field: FieldDef): FieldType;
  /** Its text takes part in keyword search (text-like types and selects). */
  searchable?: boolean;
  /** Its value checks ask the ValueContext about base members, so a write to its table loads them first. */
  checksMembers?: boolean;
  /** Filter operators this type supports (contract section 4). */
  operators: readonly Operator[];
  /** The SQL condition of one filter term (an operator of `operators`); shared shapes are in `types/sql.ts`. */
  filterSql(term: FilterTerm, params: SqlParams): string;
  /**
   * ORDER BY terms of the value `col` in direction `dir`, empty values last in both directions; null when the type cannot
   * be sorted. An indexed field gets an index that serves them (RecordDialect.sortIndexTerms), so keep them free of parameters.
   */
  sortTerms: ((col: string, dir: SortDirection, dialect: SqlDialect) => string) | null;
  /** For a searchable type whose column is not plain text: the text expression of `col` it adds to keyword search (NULL for none). */
  searchText?(col: string, dialect: SqlDialect): string;
  /** Validates `options` and `config` for a new or changed field; returns them normalised. */
  normalizeSettings(options: unknown, config: Record<string, unknown>): { options: string[] | null; config: Record<string, unknown> };
  /** Validates a written non-null value and returns what is stored; `null` means empty. Throws ValueError. */
  toStored(value: unknown, field: FieldDef, ctx: ValueContext): unknown;
  /** Turns a stored value back into the API value. */
  fromStored(raw: unknown, field: FieldDef): unknown;
  /** Validates one operand of a filter condition and returns its stored form. Defaults to toStored. */
  filterOperand?(value: unknown, field: FieldDef): unknown;
  /** Best-effort conversion of an API value of another type when a field changes type; null when it does not convert. */
  convert(value: unknown, field: FieldDef, ctx: ValueContext): unknown;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function noSettings(type: string) {
  return (options: unknown, config: Record<string, unknown>) => {
    if (options !== undefined && options !== null) throw new ValueError(`options are only for select fields, not ${type}`);
    rejectUnknownKeys(config, []);
    return { options: null, config: {} };
  };
}

export function rejectUnknownKeys(config: Record<string, unknown>, known: string[]) {
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) throw new ValueError(`unknown config key "${key}"`);
  }
}

/** Conversion that tries the value as written, then its text form. */
export function convertVia(type: Pick<FieldType, 'toStored'>) {
  return (value: unknown, field: FieldDef, ctx: ValueContext): unknown => {
    if (value === null || value === undefined) return null;
    for (const candidate of [value, Array.isArray(value) ? value.join(', ') : String(value)]) {
      try {
        return type.toStored(candidate, field, ctx);
      } catch {
        /* try the next form */
      }
    }
    return null;
  };
}

export const TEXT_OPERATORS = [
  'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'not_contains', 'starts_with', 'ends_with',
  'in', 'not_in', 'is_empty', 'is_not_empty',
] as const satisfies readonly Operator[];
export const ORDERED_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'] as const satisfies readonly Operator[];
export const SET_OPERATORS = ['has_any', 'has_all', 'has_none', 'is_empty', 'is_not_empty'] as const satisfies readonly Operator[];
