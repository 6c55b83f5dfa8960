// Functions that build an object as one literal with its keys written out, compiled once per key list (bounded cache).
//
// V8 then creates each object with its final shape at once rather than growing it key by key, and every object built by
// one function shares that shape: the larger part of turning a page of rows into records and answers.

const compiled = new Map<string, unknown>();

/**
 * `(…params) => ({ [key]: expression, … })` for `entries` of [key, JavaScript expression over `params`]. Keys are written
 * as JSON string literals (valid JavaScript whatever they hold); a "__proto__" key would set the prototype, so callers
 * keep such lists away. Cached by the parameters and entries: a field list read inside a transaction is a new array each time.
 */
export function objectLiteralFunction<F>(params: string[], entries: Array<[key: string, expression: string]>): F {
  const body = entries.map(([k, e]) => `${JSON.stringify(k)}: ${e}`).join(',\n');
  const cacheKey = `${params.join(',')}\u0000${body}`;
  let fn = compiled.get(cacheKey);
  if (!fn) {
    if (compiled.size >= 1000) compiled.clear();
    fn = new Function(...params, `return {\n${body}\n};`);
    compiled.set(cacheKey, fn);
  }
  return fn as F;
}
