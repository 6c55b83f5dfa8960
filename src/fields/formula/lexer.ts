// Splits a formula expression into tokens, each with its character offset; also rewrites field references in place.
import { FormulaError } from './errors.js';

export type Operator = '+' | '-' | '*' | '/' | '&' | '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Token =
  | { kind: 'number'; value: number; pos: number; end: number }
  | { kind: 'string'; value: string; pos: number; end: number }
  /** `{...}`: `name` is the text between the braces, `end` the offset after the closing brace. */
  | { kind: 'ref'; name: string; pos: number; end: number }
  | { kind: 'ident'; name: string; pos: number; end: number }
  | { kind: 'op'; op: Operator; pos: number; end: number }
  | { kind: '(' | ')' | ',' | 'end'; pos: number; end: number };

const NUMBER = /(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE = /\s/;

/** Reads the string literal whose opening quote is at `start`; returns its value and the offset after the closing quote. */
function readString(src: string, start: number): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  while (i < src.length) {
    const c = src[i];
    if (c === '"') return { value, end: i + 1 };
    if (c === '\\') {
      const next = src[i + 1];
      if (next !== '"' && next !== '\\') {
        throw new FormulaError(next === undefined ? 'unterminated string' : `unknown escape \\${next} in a string (only \\" and \\\\)`, next === undefined ? start : i);
      }
      value += next;
      i += 2;
    } else {
      value += c;
      i++;
    }
  }
  throw new FormulaError('unterminated string', start);
}

/** The offset of the `}` closing the reference opened at `start`. */
function closeOfRef(src: string, start: number): number {
  const close = src.indexOf('}', start + 1);
  if (close < 0) throw new FormulaError('unclosed field reference {', start);
  return close;
}

export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (WHITESPACE.test(c)) {
      i++;
      continue;
    }
    const pos = i;
    if (c === '"') {
      const { value, end } = readString(src, pos);
      tokens.push({ kind: 'string', value, pos, end });
      i = end;
      continue;
    }
    if (c === '{') {
      const close = closeOfRef(src, pos);
      tokens.push({ kind: 'ref', name: src.slice(pos + 1, close), pos, end: close + 1 });
      i = close + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(src);
    if (num) {
      i += num[0].length;
      tokens.push({ kind: 'number', value: Number(num[0]), pos, end: i });
      continue;
    }
    IDENT.lastIndex = i;
    const ident = IDENT.exec(src);
    if (ident) {
      i += ident[0].length;
      tokens.push({ kind: 'ident', name: ident[0], pos, end: i });
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '!=' || two === '<=' || two === '>=') {
      tokens.push({ kind: 'op', op: two, pos, end: i + 2 });
      i += 2;
      continue;
    }
    if (c === '+' || c === '-' || c === '*' || c === '/' || c === '&' || c === '=' || c === '<' || c === '>') {
      tokens.push({ kind: 'op', op: c, pos, end: i + 1 });
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: c, pos, end: i + 1 });
      i++;
      continue;
    }
    if (c === '}') throw new FormulaError('unexpected character } (a field whose name contains } is referenced by its id)', pos);
    throw new FormulaError(`unexpected character ${String.fromCodePoint(src.codePointAt(i) ?? 0)}`, pos);
  }
  tokens.push({ kind: 'end', pos: src.length, end: src.length });
  return tokens;
}

/**
 * Rewrites every field reference of `src` with `rewrite(name)` (undefined keeps it as written), leaving string
 * literals and everything else untouched. It never throws: a malformed tail is copied as it is.
 */
export function rewriteRefs(src: string, rewrite: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      const end = Math.min(j + 1, src.length);
      out += src.slice(i, end);
      i = end;
    } else if (c === '{') {
      const close = src.indexOf('}', i + 1);
      if (close < 0) return out + src.slice(i);
      const name = src.slice(i + 1, close);
      const replacement = rewrite(name);
      out += replacement === undefined ? src.slice(i, close + 1) : `{${replacement}}`;
      i = close + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
