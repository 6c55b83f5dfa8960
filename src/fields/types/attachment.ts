// attachment: an array of uploaded files, stored as JSON of their metadata so a read signs URLs without a database read.
import { describe, noSettings, ValueError, type FieldType } from '../field-type.js';

/** What a record stores per attachment: the upload's metadata and thumbnail sizes (URLs are signed on every read). */
export interface StoredAttachment {
  id: string;
  name?: string;
  size?: number;
  mime_type?: string;
  thumbs?: Record<'small' | 'large', { width: number; height: number }> | null;
}

/**
 * Turns a stored attachment into its API value with signed URLs. The attachment service installs the signer when the
 * app starts (field types are plain objects without dependencies); until then values carry no URLs.
 */
export const attachmentUrls: { value: (stored: StoredAttachment) => unknown } = {
  value: (s) => ({ id: s.id, name: s.name, size: s.size, mime_type: s.mime_type, url: null, thumbnails: null }),
};

export const attachment: FieldType = {
  name: 'attachment',
  storage: 'json',
  operators: ['is_empty', 'is_not_empty'],
  filterSql({ op, col }, p) {
    const empty = p.dialect.emptyJsonArray;
    return op === 'is_empty' ? `(${col} IS NULL OR ${col} = ${empty})` : `(${col} IS NOT NULL AND ${col} <> ${empty})`;
  },
  sortTerms: null,
  normalizeSettings: noSettings('attachment'),
  /**
   * Checks the shape (`["att..."]` or `[{"id": "att..."}]`) and stores the ids; the record service then replaces them with
   * the uploads' metadata, checking that each exists and that the writer may use it (`resolveAttachments`).
   */
  toStored(value) {
    if (!Array.isArray(value)) throw new ValueError(`expected an array of attachments, got ${describe(value)}`);
    const ids: string[] = [];
    for (const v of value) {
      const id = typeof v === 'string' ? v : typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as { id?: unknown }).id : undefined;
      if (typeof id !== 'string' || !/^att[0-9A-Za-z]{16}$/.test(id)) throw new ValueError('each attachment must be an attachment id or an object with its "id"');
      if (ids.includes(id)) throw new ValueError(`attachment ${id} appears twice`);
      ids.push(id);
    }
    return ids.length ? JSON.stringify(ids.map((id) => ({ id }))) : null;
  },
  fromStored(raw) {
    if (raw == null) return null;
    const list = JSON.parse(raw as string) as StoredAttachment[];
    return list.length ? list.map((s) => attachmentUrls.value(s)) : null;
  },
  // Files cannot come from another type's values (nor from an imported cell): a type change to attachment empties them.
  convert: () => null,
};
