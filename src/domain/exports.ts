// Export (contract section 15): a whole table, filtered and sorted, streamed as CSV or XLSX. Records are read in slices
// of SLICE as the client takes the bytes, so memory holds one slice however many records there are.
import { PassThrough, Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { ConditionGroup, RecordStore, SortKey, StoredRow } from '../db/store.js';
import { badRequest } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import type { Deps } from './deps.js';
import type { FieldService } from './fields.js';
import { parseFilter, parseSort } from './record-query.js';
import { apiValue } from './record-values.js';
import type { TableService } from './tables.js';
import { combineView, type View, type ViewService } from './views.js';
import type { Actor } from './deps.js';

export type ExportFormat = 'csv' | 'xlsx';
/** A checked export: what the download streams. The query answers it; the REST door streams it. */
export interface ExportPlan { tableId: string; format: ExportFormat; filter: unknown; sort: unknown; fileName: string; contentType: string; view?: View | null }

const SLICE = 500;
const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** A value as export text: lists joined by ", ", checkbox true/false, dates as stored (ISO 8601). */
export function textOf(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(textOf).filter((s) => s !== '').join(', ');
  return JSON.stringify(v);
}

const csvCell = (s: string) => (/[",\r\n;]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function createExportService({ store }: Deps, o: { tables: TableService; fields: FieldService; views: ViewService }) {
  /** Every record the plan selects, slice by slice: creation order by `_seq` keyset, or sorted pages. */
  async function* slices(tableId: string, fields: FieldDef[], where: ConditionGroup | undefined, sort: SortKey[] | undefined): AsyncGenerator<StoredRow[]> {
    const scan = store.openScan();
    try {
      yield* walk(scan.records, tableId, fields, where, sort);
    } finally {
      scan.close();
    }
  }

  async function* walk(records: RecordStore, tableId: string, fields: FieldDef[], where: ConditionGroup | undefined, sort: SortKey[] | undefined): AsyncGenerator<StoredRow[]> {
    if (sort?.length) {
      // A sort needs the database's order: pages by offset (each one sorted again; fine for what a person exports).
      for (let offset = 0; ; offset += SLICE) {
        const { rows } = await records.list(tableId, fields, { where, sort, limit: SLICE, offset });
        if (rows.length) yield rows;
        if (rows.length < SLICE) return;
      }
    }
    for (let after = 0; ;) {
      const ids = await records.idsAfter(tableId, after, SLICE);
      if (!ids.length) return;
      after = ids[ids.length - 1].seq;
      let want = ids.map((i) => i.id);
      if (where) {
        const matched = await records.matching(tableId, where, want);
        want = want.filter((id) => matched.has(id));
      }
      if (want.length) yield await records.getMany(tableId, fields, want);
    }
  }

  /** Link values as the linked records' first field: one read per linked table and slice. */
  async function linkNames(fields: FieldDef[], rows: StoredRow[]): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    for (const f of fields.filter((x) => x.type === 'link')) {
      const ids = [...new Set(rows.flatMap((r) => (apiValue(f, r) as string[] | null) ?? []))];
      const target = f.config.table_id as string;
      const first = (await o.fields.loadFields(store, target))[0];
      const names = new Map<string, string>();
      if (first && ids.length) for (const r of await store.records.getMany(target, [first], ids)) names.set(r.id, textOf(apiValue(first, r)));
      out.set(f.id, names);
    }
    return out;
  }

  /** Each record's cells: text, except that XLSX keeps numbers and booleans typed. */
  async function* records(plan: ExportPlan, typed: boolean): AsyncGenerator<unknown[][]> {
    const all = await o.fields.loadFields(store, plan.tableId);
    let where = parseFilter(plan.filter, all);
    let sort = parseSort(plan.sort, all);
    let fields = all;
    if (plan.view) ({ where, sort, visible: fields } = combineView(o.views.queryOf(plan.view, all), where, sort));
    yield [fields.map((f) => f.name)];
    for await (const rows of slices(plan.tableId, fields, where, sort)) {
      const links = await linkNames(fields, rows);
      yield rows.map((r) => fields.map((f) => {
        const v = apiValue(f, r);
        if (f.type === 'link') return textOf(((v as string[] | null) ?? []).map((id) => links.get(f.id)!.get(id) ?? id));
        // Files as "name (url)": the URLs are signed and expire after an hour, like the API's.
        if (f.type === 'attachment') return textOf(((v as Array<{ name: string; url: string }> | null) ?? []).map((x) => `${x.name} (${x.url})`));
        return typed && (typeof v === 'number' || typeof v === 'boolean') ? v : textOf(v);
      }));
    }
  }

  function csvStream(plan: ExportPlan): ReadableStream<Uint8Array> {
    const source = records(plan, false);
    const encoder = new TextEncoder();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await source.next();
        if (next.done) return controller.close();
        controller.enqueue(encoder.encode(next.value.map((cells) => `${(cells as string[]).map(csvCell).join(',')}\r\n`).join('')));
      },
      async cancel() {
        await source.return(undefined);
      },
    }, { highWaterMark: 1 });
  }

  function xlsxStream(plan: ExportPlan): ReadableStream<Uint8Array> {
    const out = new PassThrough({ highWaterMark: 1 << 20 });
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
    const sheet = book.addWorksheet('Records');
    let cancelled = false;
    out.on('close', () => void (cancelled = true));
    void (async () => {
      try {
        for await (const rows of records(plan, true)) {
          for (const cells of rows) sheet.addRow(cells).commit();
          // The zip writer does not wait for the client: wait here while a megabyte is buffered.
          while (out.readableLength > 1 << 20 && !cancelled) await new Promise((r) => setTimeout(r, 5));
          if (cancelled) return;
        }
        sheet.commit();
        await book.commit();
      } catch (e) {
        out.destroy(e as Error);
      }
    })();
    return Readable.toWeb(out) as ReadableStream<Uint8Array>;
  }

  return {
    /** Checks an export request (400 for a bad format, filter or sort, or a view) and names the file. */
    async planExport(tableId: string, q: { format?: unknown; filter?: unknown; sort?: unknown; viewId?: unknown }, actor: Actor | null = null): Promise<ExportPlan> {
      const format = q.format ?? 'csv';
      if (format !== 'csv' && format !== 'xlsx') throw badRequest('format must be csv or xlsx', [{ field: 'format', message: 'must be csv or xlsx' }]);
      let view: View | null = null;
      if (q.viewId !== undefined && q.viewId !== null && q.viewId !== '') {
        view = await o.views.getView(String(q.viewId), actor).catch(() => null);
        if (!view || view.tableId !== tableId) throw badRequest(`view_id: no view ${q.viewId} in this table`, [{ field: 'view_id', message: 'not a view of this table' }]);
      }
      const table = await o.tables.getTable(tableId);
      const fields = await o.fields.loadFields(store, tableId);
      parseFilter(q.filter, fields);
      parseSort(q.sort, fields);
      return { tableId, format, filter: q.filter ?? null, sort: q.sort ?? null, view, fileName: `${table.name}.${format}`, contentType: CONTENT_TYPES[format] };
    },
    /** The file's bytes, produced as they are read. */
    stream(plan: ExportPlan): ReadableStream<Uint8Array> {
      return plan.format === 'xlsx' ? xlsxStream(plan) : csvStream(plan);
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
