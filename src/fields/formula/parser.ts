// Recursive descent parser of formula expressions into a syntax tree whose nodes keep their character offsets.
import { FormulaError } from './errors.js';
import { tokenize, type Operator, type Token } from './lexer.js';

/** Every node has its offset (`pos`; for a binary node the operator's) and its depth, which bounds the evaluator's recursion. */
export type Node =
  | { kind: 'number'; value: number; pos: number; depth: number }
  | { kind: 'string'; value: string; pos: number; depth: number }
  | { kind: 'boolean'; value: boolean; pos: number; depth: number }
  | { kind: 'ref'; name: string; pos: number; end: number; depth: number }
  | { kind: 'negate'; arg: Node; pos: number; depth: number }
  | { kind: 'binary'; op: Operator; left: Node; right: Node; pos: number; depth: number }
  /** `name` as written (function names are case-insensitive); `pos` is the name's offset. */
  | { kind: 'call'; name: string; args: Node[]; pos: number; depth: number };

/** Deeper trees are refused, so neither the compiler nor a record's evaluation can run out of stack. */
export const MAX_DEPTH = 200;

const COMPARISONS: ReadonlySet<Operator> = new Set(['=', '!=', '<', '<=', '>', '>=']);

/** The offset where the text of `node` begins (a binary node's `pos` is its operator's). */
export function startOf(node: Node): number {
  return node.kind === 'binary' ? startOf(node.left) : node.pos;
}

function tooDeep(pos: number): FormulaError {
  return new FormulaError(`expression nested too deeply (more than ${MAX_DEPTH} levels)`, pos);
}

function describeToken(t: Token, src: string): string {
  switch (t.kind) {
    case 'end': return 'end of expression';
    case 'string': return `string ${src.slice(t.pos, t.end)}`;
    case 'ref': return `field reference ${src.slice(t.pos, t.end)}`;
    default: return src.slice(t.pos, t.end);
  }
}

class Parser {
  private i = 0;
  /** How many parentheses and unary minuses enclose the current position: bounds the parser's own recursion. */
  private nesting = 0;

  constructor(private readonly src: string, private readonly tokens: Token[]) {}

  parse(): Node {
    if (this.peek().kind === 'end') throw new FormulaError('empty expression', 0);
    const node = this.comparison();
    const rest = this.peek();
    if (rest.kind !== 'end') throw this.unexpected(rest);
    return node;
  }

  private peek(): Token {
    return this.tokens[this.i];
  }

  private next(): Token {
    return this.tokens[this.i++];
  }

  private unexpected(t: Token): FormulaError {
    return new FormulaError(`unexpected ${describeToken(t, this.src)}`, t.pos);
  }

  private binary(op: Operator, left: Node, right: Node, pos: number): Node {
    const depth = Math.max(left.depth, right.depth) + 1;
    if (depth > MAX_DEPTH) throw tooDeep(pos);
    return { kind: 'binary', op, left, right, pos, depth };
  }

  /** Comparison, the lowest precedence: at most one comparison operator per level (non-associative). */
  private comparison(): Node {
    const left = this.concat();
    const t = this.peek();
    if (!(t.kind === 'op' && COMPARISONS.has(t.op))) return left;
    this.i++;
    const node = this.binary(t.op, left, this.concat(), t.pos);
    const again = this.peek();
    if (again.kind === 'op' && COMPARISONS.has(again.op)) {
      throw new FormulaError(`comparisons do not chain: put parentheses around one of them before ${again.op}`, again.pos);
    }
    return node;
  }

  /** Left-associative levels: `&`, then `+ -`, then `* /`. */
  private concat(): Node {
    return this.leftAssoc(['&'], () => this.additive());
  }

  private additive(): Node {
    return this.leftAssoc(['+', '-'], () => this.term());
  }

  private term(): Node {
    return this.leftAssoc(['*', '/'], () => this.unary());
  }

  private leftAssoc(ops: readonly Operator[], operand: () => Node): Node {
    let node = operand();
    for (let t = this.peek(); t.kind === 'op' && ops.includes(t.op); t = this.peek()) {
      this.i++;
      node = this.binary(t.op, node, operand(), t.pos);
    }
    return node;
  }

  private unary(): Node {
    const t = this.peek();
    if (t.kind === 'op' && t.op === '-') {
      this.i++;
      this.enter(t.pos);
      const arg = this.unary();
      this.nesting--;
      if (arg.depth >= MAX_DEPTH) throw tooDeep(t.pos);
      return { kind: 'negate', arg, pos: t.pos, depth: arg.depth + 1 };
    }
    return this.primary();
  }

  private primary(): Node {
    const t = this.next();
    switch (t.kind) {
      case 'number': return { kind: 'number', value: t.value, pos: t.pos, depth: 1 };
      case 'string': return { kind: 'string', value: t.value, pos: t.pos, depth: 1 };
      case 'ref': {
        if (t.name.trim() === '') throw new FormulaError('empty field reference {}', t.pos);
        return { kind: 'ref', name: t.name, pos: t.pos, end: t.end, depth: 1 };
      }
      case '(': {
        const inner = this.nested(t);
        this.close(t);
        return inner;
      }
      case 'ident': {
        if (this.peek().kind === '(') return this.call(t.name, t.pos);
        const upper = t.name.toUpperCase();
        if (upper === 'TRUE' || upper === 'FALSE') return { kind: 'boolean', value: upper === 'TRUE', pos: t.pos, depth: 1 };
        throw new FormulaError(`unexpected name ${t.name} (a field is referenced as {${t.name}}, a function is called as ${t.name}(...))`, t.pos);
      }
      default:
        throw this.unexpected(t);
    }
  }

  /** An expression inside the parenthesis `open`, refused when the nesting gets too deep. */
  private nested(open: Token): Node {
    this.enter(open.pos);
    const node = this.comparison();
    this.nesting--;
    if (node.depth >= MAX_DEPTH) throw tooDeep(open.pos);
    return node;
  }

  private enter(pos: number): void {
    if (++this.nesting > MAX_DEPTH) throw tooDeep(pos);
  }

  /** Consumes the `)` matching `open`: at the end of the input it is missing, anything else there is unexpected. */
  private close(open: Token): void {
    const t = this.next();
    if (t.kind === ')') return;
    if (t.kind === 'end') throw new FormulaError('unclosed (', open.pos);
    throw this.unexpected(t);
  }

  private call(name: string, pos: number): Node {
    const open = this.next();
    const args: Node[] = [];
    if (this.peek().kind !== ')') {
      for (;;) {
        args.push(this.nested(open));
        if (this.peek().kind !== ',') break;
        this.i++;
      }
    }
    this.close(open);
    const depth = args.reduce((d, a) => Math.max(d, a.depth), 0) + 1;
    return { kind: 'call', name, args, pos, depth };
  }
}

/** Parses `src` into its syntax tree. Throws FormulaError with the offset of the first problem. */
export function parse(src: string): Node {
  return new Parser(src, tokenize(src)).parse();
}
