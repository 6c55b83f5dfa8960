// Reads an uploaded file as rows of cell texts, streamed: CSV through papaparse (BOM skipped, `,` `;` or tab detected),
// XLSX through exceljs's streaming reader (first sheet). Memory holds one read buffer, never the file.
import fs from 'node:fs';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';

export type FileFormat = 'csv' | 'xlsx';
/** One row of the file: `row` counts from 1 at the first data row (the header is row 0). */
export interface FileRow { row: number; cells: string[] }

const SNIFF_BYTES = 64 * 1024;
/** Parsed rows that may wait for the importer before the file is paused. */
const QUEUE_ROWS = 2000;

/** XLSX is a zip (PK\x03\x04); everything else is read as CSV text. */
export function detectFormat(file: string): FileFormat {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    fs.readSync(fd, head, 0, 4, 0);
    return head.equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])) ? 'xlsx' : 'csv';
  } finally {
    fs.closeSync(fd);
  }
}

/** The separator of the first record: whichever of `,` `;` tab occurs most outside quotes (`,` on a tie or none). */
export function sniffCsv(file: string): { delimiter: string; bomBytes: number } {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(SNIFF_BYTES);
  const n = fs.readSync(fd, buf, 0, SNIFF_BYTES, 0);
  fs.closeSync(fd);
  const bomBytes = n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const text = buf.subarray(bomBytes, n).toString('utf8');
  const counts: Record<string, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && ch in counts) counts[ch]++;
  }
  const delimiter = [';', '\t'].reduce((best, d) => (counts[d] > counts[best] ? d : best), ',');
  return { delimiter, bomBytes };
}

/** An estimate of the data rows of a CSV (its line count less the header), for progress until the real count is known. */
export async function estimateCsvRows(file: string): Promise<number> {
  let lines = 0;
  let last = 10;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    last = chunk[chunk.length - 1];
  }
  if (last !== 10) lines++;
  return Math.max(0, lines - 1);
}

/** The text of an XLSX cell value as exceljs reads it (dates at midnight UTC as `YYYY-MM-DD`). */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.richText)) return o.richText.map((t: { text?: string }) => t.text ?? '').join('');
    if ('result' in o) return cellText(o.result);
    if ('text' in o) return cellText(o.text);
    if ('error' in o) return '';
  }
  return String(v);
}

/** Every row of the file, header first (row 0). */
export async function* readRows(file: string, format: FileFormat): AsyncGenerator<FileRow> {
  if (format === 'xlsx') {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { sharedStrings: 'cache', hyperlinks: 'ignore', styles: 'cache', worksheets: 'emit' });
    let headerAt: number | undefined;
    for await (const sheet of reader) {
      for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
        const values = row.values as unknown[];
        const cells: string[] = [];
        for (let i = 1; i < values.length; i++) cells.push(cellText(values[i]));
        headerAt ??= row.number;
        yield { row: row.number - headerAt, cells };
      }
      break; // the first sheet only
    }
    return;
  }
  const { delimiter, bomBytes } = sniffCsv(file);
  // The parser's rows are taken as they come and the file is paused while enough wait: pulling rows one by one
  // through papaparse's stream makes it pause and parse the rest of its chunk again for every row (quadratic).
  const source = fs.createReadStream(file, { start: bomBytes, highWaterMark: 256 * 1024 });
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, { delimiter, skipEmptyLines: false });
  const queue: string[][] = [];
  let ended = false;
  let failure: Error | undefined;
  let notify: (() => void) | undefined;
  const wakeReader = () => notify?.();
  source.on('data', (chunk) => parser.write(chunk));
  source.on('end', () => parser.end());
  source.on('error', (e) => {
    failure = e;
    wakeReader();
  });
  parser.on('data', (row: string[]) => {
    queue.push(row);
    if (queue.length >= QUEUE_ROWS) source.pause();
    wakeReader();
  });
  parser.on('end', () => {
    ended = true;
    wakeReader();
  });
  parser.on('error', (e: Error) => {
    failure = e;
    wakeReader();
  });
  let n = 0;
  try {
    for (;;) {
      if (queue.length) {
        const rows = queue.splice(0);
        if (!ended) source.resume();
        for (const cells of rows) yield { row: n++, cells };
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (notify = resolve));
      notify = undefined;
    }
  } finally {
    source.destroy(); // a reader that stops early (a preview, a cancel) must not keep the file open
    parser.destroy();
  }
}

/** The first `limit` rows (header included), for checks before a job is queued. */
export async function firstRows(file: string, format: FileFormat, limit: number): Promise<FileRow[]> {
  const out: FileRow[] = [];
  const rows = readRows(file, format);
  try {
    for await (const r of rows) {
      out.push(r);
      if (out.length >= limit) break;
    }
  } finally {
    await rows.return(undefined);
  }
  return out;
}
