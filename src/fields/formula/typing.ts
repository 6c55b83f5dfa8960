// The static types of compiled nodes and the checks that turn a mismatch into a FormulaError at the operand's offset.
import { FormulaError } from './errors.js';
import { parseDate, type Eval, type FormulaType } from './values.js';

/** `blank` is the type of BLANK(): a blank of any type, so it fits wherever a value does. */
export type StaticType = FormulaType | 'blank';

/** A compiled node: its type, its evaluator, and where its text starts. */
export interface Typed {
  type: StaticType;
  fn: Eval;
  pos: number;
  /** The value of a string literal (possibly parenthesised): where a date is expected it may spell one. */
  literal?: string;
}

export function typeName(t: StaticType): string {
  return t === 'text' ? 'text' : t === 'blank' ? 'BLANK()' : `a ${t}`;
}

/** A text literal read as a date constant, or null when it does not spell one. */
function literalDate(arg: Typed): Eval | null {
  if (arg.literal === undefined) return null;
  const d = parseDate(arg.literal);
  return d === null ? null : () => d;
}

/** The evaluator of `arg` where `what` needs a value of type `type`; throws at the argument when it has another type. */
export function want(arg: Typed, type: FormulaType, what: string): Eval {
  if (arg.type === type || arg.type === 'blank') return arg.fn;
  if (type === 'date') {
    const d = literalDate(arg);
    if (d) return d;
    if (arg.literal !== undefined) {
      throw new FormulaError(`${what} expects a date, got text ${JSON.stringify(arg.literal)} (a date is written "YYYY-MM-DD" or as ISO 8601)`, arg.pos);
    }
  }
  throw new FormulaError(`${what} expects ${typeName(type)}, got ${typeName(arg.type)}`, arg.pos);
}

/**
 * The common type of two operands that must agree (the sides of a comparison, IF's branches, MIN's arguments): equal
 * types, BLANK() with anything, or a date with a text literal that spells a date. Throws at `pos` otherwise.
 */
export function unify(a: Typed, b: Typed, what: string, pos: number): { type: StaticType; a: Eval; b: Eval } {
  if (a.type === b.type) return { type: a.type, a: a.fn, b: b.fn };
  if (a.type === 'blank') return { type: b.type, a: a.fn, b: b.fn };
  if (b.type === 'blank') return { type: a.type, a: a.fn, b: b.fn };
  const bAsDate = a.type === 'date' ? literalDate(b) : null;
  if (bAsDate) return { type: 'date', a: a.fn, b: bAsDate };
  const aAsDate = b.type === 'date' ? literalDate(a) : null;
  if (aAsDate) return { type: 'date', a: aAsDate, b: b.fn };
  throw new FormulaError(`${what} cannot mix ${typeName(a.type)} with ${typeName(b.type)}`, pos);
}

/** The count part of an arity error: "exactly 1 argument", "2 or 3 arguments", "at least 1 argument". */
export function arity(min: number, max: number): string {
  const noun = (n: number) => (n === 1 ? 'argument' : 'arguments');
  if (min === max) return `exactly ${min} ${noun(min)}`;
  if (max === Infinity) return `at least ${min} ${noun(min)}`;
  return max === min + 1 ? `${min} or ${max} arguments` : `${min} to ${max} arguments`;
}
