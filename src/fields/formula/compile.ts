// Type-checks a formula's syntax tree and turns it into nested closures, once per definition rather than per record.
import { FormulaError } from './errors.js';
import { compileCall } from './functions.js';
import type { Operator } from './lexer.js';
import { startOf, type Node } from './parser.js';
import { typeName, unify, want, type Typed } from './typing.js';
import {
  compare, equal, finite, INPUT, text, textOf, type FormulaType, type Value,
} from './values.js';

/** What a field reference resolves to. */
export interface FieldRef {
  id: string;
  name: string;
  type: FormulaType;
}

/** A reference as written and the field it resolved to, kept to rewrite the expression by id. */
export interface ResolvedRef {
  pos: number;
  end: number;
  field: FieldRef;
}

const num = (v: Value) => v as number | null;

const ARITHMETIC: Readonly<Record<'+' | '-' | '*' | '/', (a: number, b: number) => number>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  // x / 0 is ±Infinity or NaN, which `finite` turns into blank.
  '/': (a, b) => a / b,
};

/** Orderings by the sign of `compare`. */
const ORDERINGS: Readonly<Record<'<' | '<=' | '>' | '>=', (c: number) => boolean>> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

export class Compiler {
  private readonly byId = new Map<string, FieldRef>();
  private readonly byName = new Map<string, FieldRef>();
  readonly refs: ResolvedRef[] = [];

  constructor(fields: readonly FieldRef[]) {
    for (const f of fields) {
      this.byId.set(f.id, f);
      if (!this.byName.has(f.name)) this.byName.set(f.name, f);
    }
  }

  /**
   * The field `{name}` means: a field id first (the stored form must resolve the same way whatever fields are
   * called), then an exact, case-sensitive name, then the name without surrounding spaces.
   */
  private resolve(name: string, pos: number): FieldRef {
    const field = this.byId.get(name) ?? this.byName.get(name) ?? this.byName.get(name.trim());
    if (!field) throw new FormulaError(`unknown field {${name}}`, pos);
    return field;
  }

  compile(node: Node): Typed {
    const pos = startOf(node);
    switch (node.kind) {
      case 'number': {
        const v = node.value;
        if (!Number.isFinite(v)) throw new FormulaError('number out of range', pos);
        return { type: 'number', fn: () => v, pos };
      }
      case 'string': {
        const v = text(node.value);
        return { type: 'text', fn: () => v, pos, literal: node.value };
      }
      case 'boolean': {
        const v = node.value;
        return { type: 'boolean', fn: () => v, pos };
      }
      case 'ref': {
        const field = this.resolve(node.name, pos);
        this.refs.push({ pos, end: node.end, field });
        const read = INPUT[field.type];
        const id = field.id;
        return { type: field.type, fn: (i) => read(i(id)), pos };
      }
      case 'negate': {
        const a = want(this.compile(node.arg), 'number', 'unary -');
        return { type: 'number', fn: (i) => { const v = num(a(i)); return v === null ? null : finite(-v); }, pos };
      }
      case 'binary':
        return this.binary(node.op, this.compile(node.left), this.compile(node.right), node.pos, pos);
      case 'call':
        return compileCall(node.name, node.pos, node.args.map((a) => this.compile(a)));
    }
  }

  private binary(op: Operator, left: Typed, right: Typed, opPos: number, pos: number): Typed {
    switch (op) {
      case '+': case '-': case '*': case '/': {
        const a = want(left, 'number', `operator ${op}`);
        const b = want(right, 'number', `operator ${op}`);
        const f = ARITHMETIC[op];
        return {
          type: 'number',
          pos,
          fn: (i) => {
            const x = num(a(i));
            if (x === null) return null;
            const y = num(b(i));
            return y === null ? null : finite(f(x, y));
          },
        };
      }
      case '&': {
        // Any type concatenates, by its text form (textOf); a blank is "".
        const a = left.fn;
        const b = right.fn;
        return { type: 'text', pos, fn: (i) => text(textOf(a(i)) + textOf(b(i))) };
      }
      case '=': case '!=': {
        const u = unify(left, right, `operator ${op}`, opPos);
        const { a, b } = u;
        const same = op === '=';
        return { type: 'boolean', pos, fn: (i) => equal(a(i), b(i)) === same };
      }
      default: {
        const u = unify(left, right, `operator ${op}`, opPos);
        if (u.type === 'boolean' || u.type === 'blank') {
          throw new FormulaError(`operator ${op} orders numbers, text or dates, not ${typeName(u.type)}`, opPos);
        }
        const { a, b } = u;
        const test = ORDERINGS[op];
        return {
          type: 'boolean',
          pos,
          fn: (i) => {
            const x = a(i);
            if (x === null) return null;
            const y = b(i);
            return y === null ? null : test(compare(x, y));
          },
        };
      }
    }
  }
}
