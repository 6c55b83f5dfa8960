// Workflow templates: `{{record.<field name>}}`, `{{record.id}}`, `{{steps.<node id>.<path>}}` and `{{now}}` in config values.

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;

export interface TemplateScope {
  record: Record<string, unknown> & { id?: string };
  steps: Record<string, unknown>;
  now: string;
}

/** Every template expression inside a JSON-like value. */
export function templateExpressions(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(TEMPLATE)].map((m) => m[1]);
  if (Array.isArray(value)) return value.flatMap(templateExpressions);
  if (value && typeof value === 'object') return Object.values(value).flatMap(templateExpressions);
  return [];
}

function lookup(expr: string, scope: TemplateScope): unknown {
  if (expr === 'now') return scope.now;
  if (expr === 'record.id') return scope.record.id;
  if (expr.startsWith('record.')) return scope.record[expr.slice('record.'.length)] ?? null;
  if (expr.startsWith('steps.')) {
    let value: unknown = scope.steps;
    for (const part of expr.slice('steps.'.length).split('.')) {
      if (value === null || typeof value !== 'object') return null;
      value = (value as Record<string, unknown>)[part];
    }
    return value ?? null;
  }
  return null;
}

/** Resolves templates; a string that is exactly one template keeps the value's own type (a number stays a number). */
export function resolveTemplates(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return lookup(whole[1], scope);
    return value.replace(TEMPLATE, (_m, expr: string) => {
      const v = lookup(expr, scope);
      return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolveTemplates(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveTemplates(v, scope)]));
  return value;
}
