// The formula language of computed fields (contract section 12): compile an expression once, evaluate it per record.
/*
 * Grammar, by precedence from lowest to highest:
 *
 *   expression := concat [ ("=" | "!=" | "<" | "<=" | ">" | ">=") concat ]   comparison, non-associative: 1 < 2 < 3 is
 *                                                                           a syntax error, (1 < 2) = TRUE is fine
 *   concat     := additive { "&" additive }                                 left-associative
 *   additive   := term { ("+" | "-") term }                                 left-associative
 *   term       := unary { ("*" | "/") unary }                               left-associative
 *   unary      := "-" unary | primary
 *   primary    := number | string | "{" reference "}" | TRUE | FALSE | name "(" [ expression { "," expression } ] ")"
 *               | "(" expression ")"
 *
 * Numbers are 12, 1.5, .5, 1e3. Strings are "double-quoted" with the escapes \" and \\ only. TRUE, FALSE and function
 * names are case-insensitive. A reference is {fldXXXX} (a field id, which wins) or {Field name} (case-sensitive); a
 * name containing "}" cannot be written, so such a field is referenced, and displayed, by its id.
 *
 * Types (checked by compileFormula; a mismatch is a FormulaError at the offending operand):
 * - `+ - * /` and unary minus take numbers. `&` and CONCAT take any type, each value by its text form: numbers as
 *   JavaScript writes them, booleans as TRUE/FALSE, dates as `YYYY-MM-DD` (date-only) or an ISO instant.
 * - `= !=` compare two values of one type; `< <= > >=` order numbers, text (by UTF-16 code units) or dates (by
 *   instant). BLANK() fits any type. Where a date is expected (a comparison with a date, DATETIME_DIFF, DATEADD,
 *   MIN/MAX among dates, an IF branch beside a date) a text literal spelling a date is read as one: {Due} < "2024-06-01".
 * - IF(condition, then[, else]): the condition is a boolean, the branches share a type. AND, OR, NOT take booleans.
 *   SUM, AVERAGE, ROUND, ABS take numbers; MIN, MAX numbers or dates. LEN, UPPER, LOWER, TRIM, LEFT, RIGHT take text
 *   (LEFT/RIGHT count characters by code point). The unit of DATETIME_DIFF and DATEADD is a literal "days", "hours" or
 *   "minutes" (any case).
 * - The result type of an expression that is only BLANK() is text.
 *
 * Blanks (null, "", [] in the inputs; every empty text result is blank too):
 * - arithmetic, ROUND, ABS, DATETIME_DIFF, DATEADD and the ordering operators with a blank operand give blank, as do
 *   division by zero and any non-finite number;
 * - SUM, AVERAGE, MIN, MAX skip blanks (SUM of only blanks is 0, the others blank);
 * - `&`, CONCAT, LEN, UPPER, LOWER, TRIM, LEFT, RIGHT read a blank as "" (LEN of blank is 0);
 * - `=` holds between two blanks only, so {x} = BLANK() tests for blank and {x} != 0 holds for a blank {x};
 * - IF, AND, OR and NOT read a blank condition as FALSE, as an unchecked checkbox.
 *
 * Dates are UTC throughout: a day is 24 hours, DATETIME_DIFF(a, b, unit) is a − b truncated toward zero, and DATEADD
 * keeps `YYYY-MM-DD` when it adds whole days to a date-only value, else gives an ISO instant `...Z`.
 *
 * Referenced fields are read by the formula type of their field type (field-types.ts): text, long_text, email, url,
 * phone, single_select and user as text; multi_select, link and lookup as text joined with ", "; number, rating,
 * autonumber, count and rollup as number; checkbox as boolean; date, created_time, last_modified_time as date; a
 * formula as its result type. An input value that does not read as its type (e.g. an unparseable date) is blank.
 */
import { Compiler, type FieldRef } from './compile.js';
import { FormulaError } from './errors.js';
import { rewriteRefs } from './lexer.js';
import { parse } from './parser.js';
import { output, type FormulaType } from './values.js';

export { FormulaError } from './errors.js';
export { formulaTypeOfField } from './field-types.js';
export type { FieldRef } from './compile.js';
export type { FormulaType } from './values.js';

export interface CompiledFormula {
  resultType: FormulaType;
  /** The ids of the fields it reads, each once, in the order they first appear. */
  references: string[];
  /** The expression stored by id: every reference written `{fldXXXX}`, the rest exactly as written. */
  stored: string;
  /** Evaluates for one record whose inputs are given by field id (API form); null for blank or not computable. */
  evaluate(values: (fieldId: string) => unknown): number | string | boolean | null;
}

/** Parses and type-checks `expression` against `fields` (by id, or by case-sensitive name). Throws FormulaError. */
export function compileFormula(expression: string, fields: readonly FieldRef[]): CompiledFormula {
  if (typeof expression !== 'string') throw new FormulaError('the expression must be text', 0);
  const compiler = new Compiler(fields);
  const root = compiler.compile(parse(expression));
  const refs = [...compiler.refs].sort((a, b) => a.pos - b.pos);

  let stored = '';
  let at = 0;
  for (const r of refs) {
    stored += `${expression.slice(at, r.pos)}{${r.field.id}}`;
    at = r.end;
  }
  stored += expression.slice(at);

  const fn = root.fn;
  return {
    resultType: root.type === 'blank' ? 'text' : root.type,
    references: [...new Set(refs.map((r) => r.field.id))],
    stored,
    evaluate: (values) => output(fn(values)),
  };
}

/** Shaped like a field id: such a name would be read as an id, so a field called that is shown by its id. */
const ID_SHAPE = /^fld[A-Za-z0-9]+$/;

/**
 * The stored expression shown with current names (`{fld1}` → `{Hours}`), for API reads. An unknown id stays as it is,
 * and so does the id of a field whose name could not be read back as that field (blank, containing "}", or id-shaped).
 */
export function displayFormula(stored: string, nameOf: (fieldId: string) => string | undefined): string {
  return rewriteRefs(stored, (id) => {
    const name = nameOf(id);
    if (name === undefined || name.trim() === '' || name.includes('}') || ID_SHAPE.test(name)) return undefined;
    return name;
  });
}
