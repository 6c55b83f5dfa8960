// Result rows of the bench, the printed table (figure | baseline | ratio | target | pass/fail) and number formatting.
import type { Stats } from './http-load.js';

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

/** The latency percentiles and CPU use behind each throughput or latency row, a line per row. */
export function detailLines(rows: Row[]): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    const d = r.details as Record<string, Stats | undefined> | undefined;
    const svcStats = d?.service ?? d?.rest;
    if (svcStats && 'p50' in svcStats && r.unit !== 'ms p50') {
      const other = d?.baseline ?? d?.graphql;
      // Server CPU per request is what issue 13 compares with the baseline's (cores over requests per second).
      const cpu = (x: Stats) => (typeof x.serverCores === 'number'
        ? `, server ${x.serverCores.toFixed(2)} (${Math.round((x.serverCores * 1e6) / x.rps).toLocaleString('en-US')} µs/request) / client ${x.clientCores?.toFixed(2)}${typeof x.dbCores === 'number' ? ` / postgres ${x.dbCores.toFixed(2)}` : ''}` +
          `${typeof x.otherCores === 'number' ? ` / rest of machine ${x.otherCores.toFixed(2)}` : ''} cores` : '');
      lines.push(`  ${r.id}: service p50/p90/p95/p99 ${fmt(svcStats.p50)}/${fmt(svcStats.p90)}/${fmt(svcStats.p95)}/${fmt(svcStats.p99)} ms over ${svcStats.requests} requests${cpu(svcStats)}` +
        (other ? `; ${r.baselineLabel ?? 'baseline'} ${fmt(other.p50)}/${fmt(other.p90)}/${fmt(other.p95)}/${fmt(other.p99)} ms over ${other.requests}${cpu(other)}` : ''));
    } else if (svcStats && r.unit === 'ms p50') {
      lines.push(`  ${r.id}: service p90 ${fmt(svcStats.p90)} ms over ${svcStats.requests} requests; baseline p90 ${fmt(d?.baseline?.p90)} ms; total ${String((r.details as any).total)}`);
    }
  }
  return lines;
}

/** The same workload on both engines, one line each, when a run measured both (service figures; baselines are above). */
const ENGINE_PAIRS: Array<[string, string, string]> = [
  ['4', 'PG4', 'batch create into an empty table'], ['1', 'PG1', 'list, 16 connections'],
  ['2', 'PG2', 'eq on indexed text, page 1 + total'], ['T4a', 'PG3', 'keyword search, rare term'],
];
export function engineLines(rows: Row[]): string[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const lines: string[] = [];
  for (const [sqlite, pg, what] of ENGINE_PAIRS) {
    const a = byId.get(sqlite);
    const b = byId.get(pg);
    if (!a || !b || Number.isNaN(a.service) || Number.isNaN(b.service)) continue;
    lines.push(`  ${what} (${sqlite} / ${pg}): SQLite ${fmt(a.service, a.unit)}, PostgreSQL ${fmt(b.service, b.unit)} (${(b.service / a.service).toFixed(2)}x)`);
  }
  return lines.length ? ['SQLite and PostgreSQL side by side (the service on each; each engine\'s baseline is in the table):', ...lines] : [];
}
