// Field types of a new table from its file's values (contract section 15): number, checkbox, date, email, url,
// single_select when a column has at most 50 distinct values some of which repeat, else text (long_text past 10,000
// characters or with line breaks).
import type { FieldTypeName } from '../../fields/field-type.js';

const MAX_CHOICES = 50;
const BOOL = new Set(['true', 'false', 'yes', 'no']);
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URL_RE = /^https?:\/\/\S+$/i;

/** What one column's values allow, updated value by value. */
class ColumnStats {
  nonEmpty = 0;
  number = true;
  bool = true;
  date = true;
  email = true;
  url = true;
  long = false;
  distinct: Set<string> | null = new Set();

  see(raw: string) {
    const v = raw.trim();
    if (v === '') return;
    this.nonEmpty++;
    if (this.number && !Number.isFinite(Number(v))) this.number = false;
    if (this.bool && !BOOL.has(v.toLowerCase())) this.bool = false;
    if (this.date && !(DATE.test(v) && !Number.isNaN(Date.parse(v)))) this.date = false;
    if (this.email && !EMAIL.test(v)) this.email = false;
    if (this.url && !URL_RE.test(v)) this.url = false;
    if (!this.long && (raw.length > 10_000 || raw.includes('\n'))) this.long = true;
    if (this.distinct) {
      this.distinct.add(v);
      if (this.distinct.size > MAX_CHOICES) this.distinct = null;
    }
  }

  type(): { type: FieldTypeName; choices?: string[] } {
    if (this.nonEmpty === 0) return { type: 'text' };
    if (this.bool) return { type: 'checkbox' };
    if (this.number) return { type: 'number' };
    if (this.date) return { type: 'date' };
    if (this.email) return { type: 'email' };
    if (this.url) return { type: 'url' };
    if (this.long) return { type: 'long_text' };
    if (this.distinct && this.distinct.size < this.nonEmpty && !this.distinct.has('')) {
      // A choice may not hold ", " without breaking multi-value texts; such a column stays text.
      const choices = [...this.distinct];
      if (!choices.some((c) => c.includes(','))) return { type: 'single_select', choices };
    }
    return { type: 'text' };
  }
}

export function createInference(columns: number) {
  const stats = Array.from({ length: columns }, () => new ColumnStats());
  return {
    see(cells: string[]) {
      for (let i = 0; i < stats.length; i++) stats[i].see(cells[i] ?? '');
    },
    types: () => stats.map((s) => s.type()),
  };
}
