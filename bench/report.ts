// Result rows of the bench, the printed table (figure | baseline | ratio | target | pass/fail) and number formatting.

export interface Row {
  id: string;
  workload: string;
  unit: string;
  service: number;
  /** The figure of the raw baseline (or of the compared API, for the REST facade row); null when there is none. */
  baseline: number | null;
  baselineLabel?: string;
  /** service / baseline, or what the row's target is about when that is another quotient. */
  ratio: number | null;
  target: string;
  pass: boolean;
  /** An informational row: no target, shown as "info" and left out of the overall verdict. */
  info?: boolean;
  details?: Record<string, unknown>;
}

export function fmt(x: number | null | undefined, unit = ''): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '-';
  const abs = Math.abs(x);
  const s = abs >= 1000 ? Math.round(x).toLocaleString('en-US') : abs >= 100 ? x.toFixed(0) : abs >= 10 ? x.toFixed(1) : x.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}

export function table(rows: Row[]): string {
  const head = ['#', 'workload', 'service', 'baseline', 'ratio', 'target', 'result'];
  const body = rows.map((r) => [
    r.id,
    r.workload,
    fmt(r.service, r.unit),
    r.baseline === null ? '-' : `${fmt(r.baseline, r.unit)}${r.baselineLabel ? ` (${r.baselineLabel})` : ''}`,
    r.ratio === null ? '-' : `${r.ratio.toFixed(2)}x`,
    r.target,
    r.info ? 'info' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ') + ' |';
  const sep = '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|';
  return [line(head), sep, ...body.map(line)].join('\n');
}
