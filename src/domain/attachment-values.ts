// Record writes naming attachments: one query per batch loads the uploads, checks the writer may use each, and stores their metadata.
import { eq, inArray, like } from 'drizzle-orm';
import type { RowWrite, Store, UnitOfWork } from '../db/store.js';
import { AppError } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import type { StoredAttachment } from '../fields/types/attachment.js';
import type { Actor } from './deps.js';

/**
 * Replaces the ids that `attachment.toStored` kept with the uploads' metadata. An attachment may be named by the user
 * who uploaded it, by a workflow or import of the base (they only copy values), or in an update of a record that
 * already holds it (a client sending a value back unchanged); anything else, or an unknown id, is a 400.
 */
export async function resolveAttachments(tx: UnitOfWork, schema: { attachments: any }, actor: Actor | null, fields: FieldDef[], rows: RowWrite[], single: boolean, heldBy?: (ids: string[]) => Promise<Map<string, Set<string>>>) {
  const attachmentFields = fields.filter((f) => f.type === 'attachment');
  const uses: Array<{ index: number; field: FieldDef; list: StoredAttachment[]; row: RowWrite }> = [];
  rows.forEach((row, index) => {
    for (const field of attachmentFields) {
      const raw = row.values.get(field.id);
      if (typeof raw === 'string') uses.push({ index, field, list: JSON.parse(raw) as StoredAttachment[], row });
    }
  });
  if (!uses.length) return;
  const ids = [...new Set(uses.flatMap((u) => u.list.map((a) => a.id)))];
  const t = schema.attachments;
  const found = new Map<string, any>((await tx.db.select().from(t).where(inArray(t.id, ids))).map((r: any) => [r.id, r]));
  const held = heldBy ? await heldBy(rows.map((r) => r.id)) : new Map<string, Set<string>>();
  const userId = actor?.kind === 'user' ? actor.id : actor?.kind === 'import' ? actor.userId : null;
  const copies = actor?.kind === 'workflow' || actor?.kind === 'import';
  for (const u of uses) {
    const stored = u.list.map((a) => {
      const row = found.get(a.id);
      const fail = (message: string) => {
        const detail = { message, field: u.field.name, ...(single ? {} : { index: u.index }) };
        return new AppError('BAD_REQUEST', `${single ? '' : `records[${u.index}]: `}field "${u.field.name}": ${message}`, { details: [detail] });
      };
      if (!row) throw fail(`attachment ${a.id} does not exist`);
      if (!copies && row.ownerId !== userId && !held.get(u.row.id)?.has(a.id)) throw fail(`attachment ${a.id} was uploaded by someone else`);
      return { id: row.id, name: row.name, size: row.size, mime_type: row.mimeType, thumbs: row.thumbnails ?? null } satisfies StoredAttachment;
    });
    u.row.values.set(u.field.id, JSON.stringify(stored));
  }
}

/** The attachment ids each record holds in its attachment fields, from rows as the record store reads them. */
export function heldIds(fields: FieldDef[], rows: Array<{ id: string; values: Record<string, unknown> }>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of rows) {
    const set = new Set<string>();
    for (const f of fields) {
      const raw = f.type === 'attachment' ? r.values[f.id] : null;
      if (typeof raw === 'string') for (const a of JSON.parse(raw) as StoredAttachment[]) set.add(a.id);
    }
    out.set(r.id, set);
  }
  return out;
}

/**
 * Which of `candidates` something still refers to: the sweep removes the rest. Each source of references is one
 * source here: the records' attachment columns (read once per sweep, column by column), and the trash, whose JSON
 * `payload`s hold deleted records' (and fields' and tables') stored values, so a file stays while its record can come back.
 */
export async function referencedAttachments(store: Store, loadFields: (uow: UnitOfWork, tableId: string) => Promise<FieldDef[]>, candidates: string[]): Promise<Set<string>> {
  const wanted = new Set(candidates);
  const held = new Set<string>();
  if (!wanted.size) return held;
  const f = store.schema.fields;
  const rows = await store.db.select({ tableId: f.tableId, id: f.id }).from(f).where(eq(f.type, 'attachment'));
  for (const { tableId, id } of rows) {
    const field = (await loadFields(store, tableId)).find((x) => x.id === id);
    if (!field) continue;
    for (const { raw } of await store.records.readField(tableId, field)) {
      if (typeof raw !== 'string') continue;
      for (const a of JSON.parse(raw) as StoredAttachment[]) if (wanted.has(a.id)) held.add(a.id);
    }
  }
  // An id is random alphanumeric text, so finding it in a payload means the payload holds it. The database searches, so a
  // deleted table's payload (every record of it) never comes into memory; few files are candidates in one sweep.
  const { trash } = store.schema;
  for (const id of wanted) {
    if (!held.has(id) && (await store.db.select({ id: trash.id }).from(trash).where(like(trash.payload, `%${id}%`)).limit(1)).length) held.add(id);
  }
  return held;
}
