// Imports (contract section 15): checks a spooled file and its options when the job is asked for, then, in the job
// runner, reads the file row by row and writes it in chunks, each chunk one transaction with the job's progress.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ClaimedJob, UnitOfWork } from '../../db/store.js';
import { badRequest } from '../../errors.js';
import { UPLOAD_ID } from '../../ids.js';
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import type { ImportActor } from '../deps.js';
import type { FieldService } from '../fields.js';
import { MAX_JOB_ERRORS, type JobService, type RowError } from '../jobs.js';
import { fieldResolver } from '../record-query.js';
import type { RecordService } from '../records.js';
import type { ColumnTarget, ImportRow } from './convert.js';
import { createInference } from './infer.js';
import { detectFormat, estimateCsvRows, firstRows, readRows, type FileFormat } from './read-rows.js';

/** Rows per transaction: big enough that a row costs little, small enough that other writes wait at most a moment. */
export const IMPORT_CHUNK_ROWS = 1000;

/** What a queued import job holds (jobs.input). */
export interface ImportInput {
  upload: string;
  fileName: string;
  format: FileFormat;
  header: boolean;
  /** Column index → field id (into an existing table); absent for a new table, whose fields come from the file. */
  targets?: Array<{ index: number; column: string; fieldId: string }>;
}

/** The job stops here: cancelled, or the server is stopping. */
export class JobStopped extends Error {
  constructor(readonly why: 'cancelled' | 'stopping') {
    super(why);
  }
}

/** Column names of a header (or `Column N` without one), made unique and non-empty for field names. */
function columnNames(header: string[], count: number, hasHeader: boolean): string[] {
  const seen = new Set<string>();
  return Array.from({ length: count }, (_v, i) => {
    let name = (hasHeader ? (header[i] ?? '').trim() : '').slice(0, 100) || `Column ${i + 1}`;
    for (let n = 2; seen.has(name.toLowerCase()); n++) name = `${(hasHeader ? header[i].trim() : `Column ${i + 1}`).slice(0, 90)} ${n}`;
    seen.add(name.toLowerCase());
    return name;
  });
}

export function createImporter(o: { dataDir: string; records: RecordService; fields: FieldService; jobs: JobService }) {
  const spoolDir = path.join(o.dataDir, 'uploads');
  fs.mkdirSync(spoolDir, { recursive: true });
  // Which DATA_DIR a job's file is in: processes sharing it share this id and may claim its jobs.
  const idFile = path.join(spoolDir, '.spool-id');
  if (!fs.existsSync(idFile)) fs.writeFileSync(idFile, randomBytes(12).toString('hex'), { flag: 'wx' });
  const spoolId = fs.readFileSync(idFile, 'utf8').trim();

  function fileOf(upload: unknown): string {
    if (typeof upload !== 'string' || !UPLOAD_ID.test(upload) || !fs.existsSync(path.join(spoolDir, upload))) {
      throw badRequest('upload must name a file uploaded with this request', [{ field: 'file', message: 'no such upload' }]);
    }
    return path.join(spoolDir, upload);
  }

  function parseOptions(options: unknown): { header: boolean; mapping?: Record<string, unknown>; name?: string } {
    let o2 = options ?? {};
    if (typeof o2 === 'string') {
      try {
        o2 = JSON.parse(o2);
      } catch {
        throw badRequest('options must be a JSON object', [{ field: 'options', message: 'malformed JSON' }]);
      }
    }
    if (typeof o2 !== 'object' || o2 === null || Array.isArray(o2)) throw badRequest('options must be a JSON object', [{ field: 'options', message: 'must be an object' }]);
    const { header = true, mapping, name } = o2 as Record<string, unknown>;
    const extra = Object.keys(o2).find((k) => !['header', 'mapping', 'name'].includes(k));
    if (extra) throw badRequest(`options: unknown property "${extra}"`, [{ field: `options.${extra}`, message: 'unknown property' }]);
    if (typeof header !== 'boolean') throw badRequest('options.header must be true or false', [{ field: 'options.header', message: 'must be a boolean' }]);
    if (mapping !== undefined && (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping))) {
      throw badRequest('options.mapping must be an object of column → field name, id or null', [{ field: 'options.mapping', message: 'must be an object' }]);
    }
    if (name !== undefined && typeof name !== 'string') throw badRequest('options.name must be a string', [{ field: 'options.name', message: 'must be a string' }]);
    return { header, mapping: mapping as Record<string, unknown> | undefined, name };
  }

  /** The columns of the file, read from its first row; a file that cannot be read is a 400. */
  async function headerOf(file: string, format: FileFormat, hasHeader: boolean): Promise<string[]> {
    let rows: Awaited<ReturnType<typeof firstRows>>;
    try {
      rows = await firstRows(file, format, 1);
    } catch (e) {
      throw badRequest(`The file cannot be read as ${format.toUpperCase()}: ${(e as Error).message}`, [{ field: 'file', message: 'unreadable' }]);
    }
    if (!rows.length) throw badRequest('The file holds no rows', [{ field: 'file', message: 'empty' }]);
    return columnNames(rows[0].cells, rows[0].cells.length, hasHeader);
  }

  /** Columns into fields: by the mapping (others skipped), or by exact field name; read-only fields are never written. */
  function targetsOf(columns: string[], fields: FieldDef[], mapping: Record<string, unknown> | undefined): ImportInput['targets'] {
    const resolve = fieldResolver(fields);
    if (!mapping) {
      return columns.flatMap((column, index) => {
        const f = fields.find((x) => x.name === column);
        // Attachment columns are skipped: a file cannot come from a cell (an export writes names and expiring URLs).
        return f && !typeOfField(f).readOnly && f.type !== 'attachment' ? [{ index, column, fieldId: f.id }] : [];
      });
    }
    const out: NonNullable<ImportInput['targets']> = [];
    for (const [column, target] of Object.entries(mapping)) {
      const where = `options.mapping.${column}`;
      const index = columns.indexOf(column);
      if (index < 0) throw badRequest(`${where}: the file has no column "${column}"`, [{ field: where, message: 'no such column' }]);
      if (target === null) continue;
      const f = typeof target === 'string' ? resolve(target) : undefined;
      if (!f) throw badRequest(`${where}: unknown field ${JSON.stringify(target)}`, [{ field: where, message: 'unknown field' }]);
      if (typeOfField(f).readOnly) throw badRequest(`${where}: field "${f.name}" is read-only (${f.type})`, [{ field: where, message: 'read-only field' }]);
      if (f.type === 'attachment') throw badRequest(`${where}: field "${f.name}" holds files, which an import cannot fill`, [{ field: where, message: 'attachment field' }]);
      out.push({ index, column, fieldId: f.id });
    }
    return out;
  }

  /** Writes one chunk with the job's progress; throws JobStopped when the job was cancelled meanwhile. */
  async function writeChunk(job: ClaimedJob, actor: ImportActor, rows: ImportRow[], targets: (fields: FieldDef[]) => ColumnTarget[], state: Progress) {
    const done = await o.records.importChunk(actor, job.tableId!, rows, targets, async (tx: UnitOfWork, result) => {
      if (await o.jobs.cancelRequested(tx, job.id)) return false;
      state.processed += rows.length;
      state.imported += result.imported;
      state.failed += result.errors.length;
      const room = MAX_JOB_ERRORS - state.errors.length;
      if (room > 0 && result.errors.length) state.errors.push(...result.errors.slice(0, room));
      await o.jobs.progress(tx, job.id, { ...state, errors: result.errors.length && room > 0 ? state.errors : undefined, leaseUntil: state.lease() });
      return true;
    });
    if (done.cancelled) throw new JobStopped('cancelled');
  }

  interface Progress { processed: number; imported: number; failed: number; total: number | null; errors: RowError[]; lease: () => string }

  return {
    spoolDir,
    spoolId,
    /**
     * Deletes uploads no queued or running job holds that are older than an hour (a crash between the upload and its
     * job, or after the job's end): younger ones may be a request of another process still being read.
     */
    async sweepUploads(held: Set<string>) {
      const hourAgo = Date.now() - 3_600_000;
      for (const name of fs.readdirSync(spoolDir)) {
        if (!UPLOAD_ID.test(name) || held.has(name)) continue;
        const file = path.join(spoolDir, name);
        if ((fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < hourAgo) fs.rmSync(file, { force: true });
      }
    },
    /** Deletes a spooled upload (a refused request's, or a finished job's). */
    discard(upload: unknown) {
      if (typeof upload === 'string' && UPLOAD_ID.test(upload)) fs.rmSync(path.join(spoolDir, upload), { force: true });
    },

    /** Checks an import into an existing table before it is queued: the file's columns and the mapping (400 otherwise). */
    async prepareInto(fields: FieldDef[], upload: unknown, fileName: string, options: unknown): Promise<ImportInput> {
      const file = fileOf(upload);
      const opts = parseOptions(options);
      const format = detectFormat(file);
      const columns = await headerOf(file, format, opts.header);
      return { upload: upload as string, fileName, format, header: opts.header, targets: targetsOf(columns, fields, opts.mapping) };
    },

    /** Checks an import as a new table: the table's name (options.name, else the file's name without extension). */
    async prepareNew(upload: unknown, fileName: string, options: unknown): Promise<{ input: ImportInput; name: string }> {
      const file = fileOf(upload);
      const opts = parseOptions(options);
      if (opts.mapping) throw badRequest('options.mapping applies to imports into an existing table', [{ field: 'options.mapping', message: 'not allowed here' }]);
      const format = detectFormat(file);
      await headerOf(file, format, opts.header);
      const name = (opts.name ?? fileName.replace(/\.[^.]*$/, '')).trim() || 'Imported table';
      return { input: { upload: upload as string, fileName, format, header: opts.header }, name };
    },

    /** Runs a claimed import job to its end; throws JobStopped when cancelled or told to stop. */
    async run(job: ClaimedJob, control: { stopping: () => boolean; leaseUntil: () => string; pause: () => Promise<void> }) {
      const input = job.input as unknown as ImportInput;
      const file = fileOf(input.upload);
      const actor: ImportActor = { kind: 'import', id: job.id, userId: job.createdBy, baseId: job.baseId, isAdmin: false };
      const shift = input.header ? 0 : 1; // without a header, the file's first row is data row 1
      const state: Progress = { processed: 0, imported: 0, failed: 0, total: null, errors: [], lease: control.leaseUntil };
      let targets = input.targets;
      if (!targets) {
        // A new table: one pass to learn the columns' types, then the fields, then the rows.
        let columns: string[] = [];
        let inference: ReturnType<typeof createInference> | undefined;
        let total = 0;
        for await (const r of readRows(file, input.format)) {
          if (control.stopping()) throw new JobStopped('stopping');
          if (r.row === 0 && input.header) {
            columns = r.cells;
            inference = createInference(columns.length);
            continue;
          }
          if (!inference) inference = createInference(r.cells.length);
          if (r.cells.length > columns.length) columns = [...columns, ...Array(r.cells.length - columns.length).fill('')];
          inference.see(r.cells);
          total++;
        }
        state.total = total;
        const names = columnNames(columns, columns.length, input.header);
        const types = inference?.types() ?? [];
        targets = [];
        for (const [index, column] of names.entries()) {
          const t = types[index] ?? { type: 'text' as const };
          const f = await o.fields.createField(job.tableId!, { name: column, type: t.type, ...(t.choices ? { options: t.choices } : {}) }, actor);
          targets.push({ index, column: input.header ? (columns[index] ?? column) : column, fieldId: f.id });
        }
      } else if (input.format === 'csv') state.total = await estimateCsvRows(file);
      const wanted = targets;
      const resolve = (fields: FieldDef[]): ColumnTarget[] => wanted.flatMap((t) => {
        const field = fields.find((f) => f.id === t.fieldId);
        return field ? [{ index: t.index, column: t.column, field }] : [];
      });
      let chunk: ImportRow[] = [];
      const flush = async () => {
        await control.pause();
        if (control.stopping()) throw new JobStopped('stopping');
        await writeChunk(job, actor, chunk, resolve, state);
        chunk = [];
      };
      for await (const r of readRows(file, input.format)) {
        if (r.row === 0 && input.header) continue;
        chunk.push({ row: r.row + shift, cells: r.cells });
        if (chunk.length >= IMPORT_CHUNK_ROWS) await flush();
      }
      state.total = state.processed + chunk.length;
      await flush();
    },
  };
}

export type Importer = ReturnType<typeof createImporter>;
