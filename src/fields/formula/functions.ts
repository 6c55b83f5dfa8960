// The formula functions: how many arguments each takes, the types it accepts and returns, and its evaluator.
import { FormulaError } from './errors.js';
import { arity, unify, want, type StaticType, type Typed } from './typing.js';
import {
  chars, compare, dateAt, DateValue, finite, MS_PER_UNIT, roundHalfAway, text, textOf, type Eval, type Value,
} from './values.js';

interface FunctionDef {
  min: number;
  max: number;
  /** Checks the arguments (their count is already right) and builds the call's evaluator. */
  compile(args: Typed[], name: string): { type: StaticType; fn: Eval };
}

// Narrowing helpers: the type checks guarantee what a checked evaluator returns, so these only restate it.
const num = (v: Value) => v as number | null;
const str = (v: Value) => v as string | null;
const date = (v: Value) => v as DateValue | null;

/** The unit argument of DATETIME_DIFF and DATEADD: a text literal, so a wrong unit is reported when the field is saved. */
function unit(arg: Typed, name: string): number {
  if (arg.literal === undefined) throw new FormulaError(`${name} takes its unit as a literal "days", "hours" or "minutes"`, arg.pos);
  const ms = MS_PER_UNIT.get(arg.literal.toLowerCase());
  if (ms === undefined) throw new FormulaError(`unknown unit ${JSON.stringify(arg.literal)} for ${name} (use "days", "hours" or "minutes")`, arg.pos);
  return ms;
}

/** One text argument in, one text out; a blank argument is "" and an empty result is blank. */
function textMap(f: (s: string) => string): FunctionDef {
  return {
    min: 1, max: 1,
    compile([arg], name) {
      const a = want(arg, 'text', name);
      return { type: 'text', fn: (i) => text(f(textOf(a(i)))) };
    },
  };
}

/** One number in, one number out; a blank argument gives blank. */
function numberMap(f: (n: number) => number | null): FunctionDef {
  return {
    min: 1, max: 1,
    compile([arg], name) {
      const a = want(arg, 'number', name);
      return { type: 'number', fn: (i) => { const v = num(a(i)); return v === null ? null : f(v); } };
    },
  };
}

/** LEFT and RIGHT: the first or last `n` characters (code points) of a text; a blank or negative `n` gives blank. */
function slice(fromEnd: boolean): FunctionDef {
  return {
    min: 2, max: 2,
    compile([s, n], name) {
      const a = want(s, 'text', `${name} argument 1`);
      const b = want(n, 'number', `${name} argument 2`);
      return {
        type: 'text',
        fn: (i) => {
          const count = num(b(i));
          if (count === null || count < 1) return null;
          const whole = textOf(a(i));
          const k = Math.trunc(count);
          if (k >= whole.length) return text(whole);
          const cs = chars(whole);
          return text((fromEnd ? cs.slice(Math.max(0, cs.length - k)) : cs.slice(0, k)).join(''));
        },
      };
    },
  };
}

/** SUM and AVERAGE fold their non-blank numbers; `finish` turns the total and count into the result. */
function numberFold(finish: (total: number, count: number) => number | null): FunctionDef {
  return {
    min: 1, max: Infinity,
    compile(args, name) {
      const fns = args.map((a, k) => want(a, 'number', `${name} argument ${k + 1}`));
      return {
        type: 'number',
        fn: (i) => {
          let total = 0;
          let count = 0;
          for (const f of fns) {
            const v = num(f(i));
            if (v !== null) { total += v; count++; }
          }
          return finish(total, count);
        },
      };
    },
  };
}

/** MIN and MAX over numbers, or over dates when an argument is a date; blanks are skipped, all blank gives blank. */
function extreme(sign: 1 | -1): FunctionDef {
  return {
    min: 1, max: Infinity,
    compile(args, name) {
      const type = args.some((a) => a.type === 'date') ? 'date' : 'number';
      const fns = args.map((a, k) => want(a, type, `${name} argument ${k + 1}`));
      return {
        type,
        fn: (i) => {
          let best: Exclude<Value, null> | null = null;
          for (const f of fns) {
            const v = f(i);
            if (v !== null && (best === null || compare(v, best) * sign > 0)) best = v;
          }
          return best;
        },
      };
    },
  };
}

const FUNCTIONS: ReadonlyMap<string, FunctionDef> = new Map<string, FunctionDef>([
  ['IF', {
    min: 2, max: 3,
    compile([cond, then, otherwise]) {
      const c = want(cond, 'boolean', 'IF condition');
      if (!otherwise) {
        const t = then.fn;
        return { type: then.type, fn: (i) => (c(i) === true ? t(i) : null) };
      }
      const u = unify(then, otherwise, 'IF branches', otherwise.pos);
      const t = u.a;
      const e = u.b;
      // A blank condition takes the "else" branch, as a blank checkbox is unchecked.
      return { type: u.type, fn: (i) => (c(i) === true ? t(i) : e(i)) };
    },
  }],
  ['AND', {
    min: 1, max: Infinity,
    compile(args, name) {
      const fns = args.map((a, k) => want(a, 'boolean', `${name} argument ${k + 1}`));
      return { type: 'boolean', fn: (i) => { for (const f of fns) if (f(i) !== true) return false; return true; } };
    },
  }],
  ['OR', {
    min: 1, max: Infinity,
    compile(args, name) {
      const fns = args.map((a, k) => want(a, 'boolean', `${name} argument ${k + 1}`));
      return { type: 'boolean', fn: (i) => { for (const f of fns) if (f(i) === true) return true; return false; } };
    },
  }],
  ['NOT', {
    min: 1, max: 1,
    compile([arg], name) {
      const a = want(arg, 'boolean', name);
      return { type: 'boolean', fn: (i) => a(i) !== true };
    },
  }],
  ['BLANK', { min: 0, max: 0, compile: () => ({ type: 'blank', fn: () => null }) }],
  ['SUM', numberFold((total) => finite(total))],
  ['AVERAGE', numberFold((total, count) => (count === 0 ? null : finite(total / count)))],
  ['MIN', extreme(-1)],
  ['MAX', extreme(1)],
  ['ROUND', {
    min: 2, max: 2,
    compile([x, digits], name) {
      const a = want(x, 'number', `${name} argument 1`);
      const b = want(digits, 'number', `${name} argument 2`);
      return {
        type: 'number',
        fn: (i) => {
          const v = num(a(i));
          const d = num(b(i));
          return v === null || d === null ? null : roundHalfAway(v, d);
        },
      };
    },
  }],
  ['ABS', numberMap(Math.abs)],
  ['CONCAT', {
    min: 1, max: Infinity,
    compile(args) {
      const fns = args.map((a) => a.fn);
      return { type: 'text', fn: (i) => { let s = ''; for (const f of fns) s += textOf(f(i)); return text(s); } };
    },
  }],
  ['LEN', {
    min: 1, max: 1,
    compile([arg], name) {
      const a = want(arg, 'text', name);
      return { type: 'number', fn: (i) => chars(textOf(a(i))).length };
    },
  }],
  ['UPPER', textMap((s) => s.toUpperCase())],
  ['LOWER', textMap((s) => s.toLowerCase())],
  ['TRIM', textMap((s) => s.trim())],
  ['LEFT', slice(false)],
  ['RIGHT', slice(true)],
  ['DATETIME_DIFF', {
    min: 3, max: 3,
    compile([a, b, u], name) {
      const x = want(a, 'date', `${name} argument 1`);
      const y = want(b, 'date', `${name} argument 2`);
      const ms = unit(u, name);
      return {
        type: 'number',
        fn: (i) => {
          const p = date(x(i));
          const q = date(y(i));
          return p === null || q === null ? null : finite(Math.trunc((p.ms - q.ms) / ms));
        },
      };
    },
  }],
  ['DATEADD', {
    min: 3, max: 3,
    compile([d, n, u], name) {
      const x = want(d, 'date', `${name} argument 1`);
      const y = want(n, 'number', `${name} argument 2`);
      const ms = unit(u, name);
      const days = ms === MS_PER_UNIT.get('days');
      return {
        type: 'date',
        fn: (i) => {
          const p = date(x(i));
          const k = num(y(i));
          if (p === null || k === null) return null;
          // Whole days added to a date-only value land on midnight again, so the result stays date-only.
          return dateAt(p.ms + Math.round(k * ms), p.dateOnly && days && Number.isInteger(k));
        },
      };
    },
  }],
]);

/** Compiles a call of `name` (any case) at `pos` with compiled arguments; throws for an unknown name or a wrong count. */
export function compileCall(name: string, pos: number, args: Typed[]): Typed {
  const upper = name.toUpperCase();
  const def = FUNCTIONS.get(upper);
  if (!def) throw new FormulaError(`unknown function ${name}`, pos);
  if (args.length < def.min || args.length > def.max) {
    throw new FormulaError(`${upper} takes ${arity(def.min, def.max)}, got ${args.length}`, pos);
  }
  const { type, fn } = def.compile(args, upper);
  return { type, fn, pos };
}
