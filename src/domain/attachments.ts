// Attachment files (contract 16): stored from a spooled upload, thumbnails made with sharp, bytes on disk (SQLite) or
// in PostgreSQL chunks, served through signed URLs, and swept when no record refers to them any more.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { and, asc, eq, inArray, lt } from 'drizzle-orm';
import sharp from 'sharp';
import { first } from '../db/store.js';
import { AppError } from '../errors.js';
import { newId, nowIso, UPLOAD_ID } from '../ids.js';
import type { Deps } from './deps.js';

export type Variant = 'original' | 'small' | 'large';
export type Thumbs = Record<'small' | 'large', { width: number; height: number }> | null;
export interface AttachmentMeta { id: string; ownerId: string; name: string; size: number; mimeType: string; thumbnails: Thumbs }

/** Thumbnails fit inside these boxes and are never upscaled. */
const THUMB_BOX = { small: 200, large: 800 } as const;
const CHUNK = 1 << 20;
const URL_TTL_S = 3600;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** The type of an image from its first bytes: a client's claimed type is trusted only for non-images. */
export function sniffImage(head: Buffer): string | null {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (/^GIF8[79]a/.test(head.subarray(0, 6).toString('latin1'))) return 'image/gif';
  return null;
}

function readHead(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(16);
    const n = fs.readSync(fd, buf, 0, 16, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** A client-claimed type that is not an image type (those come only from the bytes), else application/octet-stream. */
function claimedType(claimed: string | undefined): string {
  const t = (claimed ?? '').toLowerCase().split(';')[0].trim();
  return /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(t) && !IMAGE_TYPES.has(t) && t !== 'text/html' ? t : 'application/octet-stream';
}

export function createAttachmentService(deps: Deps) {
  const { store, config, signer } = deps;
  const { attachments, attachmentChunks } = store.schema;
  const filesDir = path.join(config.dataDir, 'files');
  const onDisk = store.engine === 'sqlite';
  if (onDisk) fs.mkdirSync(filesDir, { recursive: true });
  const diskPath = (id: string, v: Variant) => path.join(filesDir, v === 'original' ? id : `${id}.${v}`);
  // Uploads are streamed here by the REST route before the operation runs (on the files' disk, so a store is a rename).
  const incomingDir = path.join(filesDir, '.incoming');
  fs.mkdirSync(incomingDir, { recursive: true });

  /** Copies a local file into the store under (id, variant): a rename on disk, 1 MiB chunks (one insert each) in PostgreSQL. */
  async function put(id: string, variant: Variant, file: string) {
    if (onDisk) return fs.renameSync(file, diskPath(id, variant));
    let seq = 0;
    for await (const chunk of fs.createReadStream(file, { highWaterMark: CHUNK })) {
      const data = chunk as Buffer;
      await store.transaction(async (tx) => { await tx.db.insert(attachmentChunks).values({ attachmentId: id, variant, seq: seq++, data }); });
    }
    fs.rmSync(file, { force: true });
  }

  /** The bytes of (id, variant) as a stream: a file read, or the chunks one query at a time (never the whole file). */
  function open(id: string, variant: Variant): Readable {
    if (onDisk) return fs.createReadStream(diskPath(id, variant));
    async function* chunks() {
      for (let seq = 0; ; seq++) {
        const row = await first(store.db.select({ data: attachmentChunks.data }).from(attachmentChunks)
          .where(and(eq(attachmentChunks.attachmentId, id), eq(attachmentChunks.variant, variant), eq(attachmentChunks.seq, seq))).limit(1));
        if (!row) return;
        yield row.data;
      }
    }
    return Readable.from(chunks());
  }

  async function thumbnail(file: string, box: number): Promise<{ file: string; width: number; height: number }> {
    const out = `${file}.${box}.thumb`;
    // Animated GIFs: the first frame. WebP output keeps thumbnails small for every input type.
    const info = await sharp(file, { limitInputPixels: 100_000_000 }).rotate().resize(box, box, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toFile(out);
    return { file: out, width: info.width, height: info.height };
  }

  async function load(id: string): Promise<AttachmentMeta | undefined> {
    const row = await first(store.db.select().from(attachments).where(eq(attachments.id, id)).limit(1));
    return row && { id: row.id, ownerId: row.ownerId, name: row.name, size: row.size, mimeType: row.mimeType, thumbnails: row.thumbnails as Thumbs };
  }

  // URLs of the current minute's expiry, so repeated reads of the same records do not sign again (cleared each minute).
  let cacheExp = 0;
  const cache = new Map<string, string>();
  function signedUrl(id: string, variant: Variant, expS: number) {
    if (expS !== cacheExp || cache.size > 100_000) {
      cache.clear();
      cacheExp = expS;
    }
    const key = `${id}:${variant}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const url = sign(id, variant, expS);
    cache.set(key, url);
    return url;
  }
  function sign(id: string, variant: Variant, expS: number) {
    const sig = signer.sign(['attachment', id, variant], expS);
    const v = variant === 'original' ? '' : `&variant=${variant}`;
    return `${config.publicUrl}/api/v1/attachments/${id}/content?exp=${expS}${v}&sig=${sig}`;
  }

  async function removeAll(ids: string[]) {
    await store.transaction(async (tx) => {
      await tx.db.delete(attachments).where(inArray(attachments.id, ids));
      if (!onDisk) await tx.db.delete(attachmentChunks).where(inArray(attachmentChunks.attachmentId, ids));
    });
    if (onDisk) for (const id of ids) for (const v of ['original', 'small', 'large'] as const) fs.rmSync(diskPath(id, v), { force: true });
  }

  return {
    load,
    incomingDir,
    /**
     * The upload operation: the file the route streamed into `incomingDir` under `upload` (its id is known only to that
     * request) becomes an attachment of `ownerId`. Its size is read from the file; name, claimed type and hash as sent.
     */
    async fromUpload(ownerId: string, upload: string, meta: { name: string; sha256: string; claimedType?: string | null }) {
      const file = path.join(incomingDir, upload);
      if (!UPLOAD_ID.test(upload) || !fs.existsSync(file)) throw new AppError('BAD_REQUEST', 'upload must name a file uploaded with this request', { details: [{ field: 'file', message: 'no such upload' }] });
      return this.create(ownerId, file, { name: meta.name, size: fs.statSync(file).size, sha256: meta.sha256, claimedType: meta.claimedType ?? undefined });
    },
    /** Stores a spooled upload (`file` is moved or consumed) as a new attachment owned by `ownerId`; thumbnails made now. */
    async create(ownerId: string, file: string, upload: { name: string; size: number; sha256: string; claimedType?: string }) {
      const id = newId('att');
      const mimeType = sniffImage(readHead(file)) ?? claimedType(upload.claimedType);
      let thumbnails: Thumbs = null;
      const made: Array<[Variant, string]> = [];
      if (IMAGE_TYPES.has(mimeType)) {
        try {
          const small = await thumbnail(file, THUMB_BOX.small);
          const large = await thumbnail(file, THUMB_BOX.large);
          made.push(['small', small.file], ['large', large.file]);
          thumbnails = { small: { width: small.width, height: small.height }, large: { width: large.width, height: large.height } };
        } catch {
          thumbnails = null; // bytes that look like an image but do not decode: kept as a file without thumbnails
        }
      }
      // The row first, so bytes are never stored without one (the sweep finds rows); nobody knows the id before the answer.
      await store.transaction(async (tx) => {
        await tx.db.insert(attachments).values({ id, ownerId, name: upload.name.slice(0, 255) || 'file', size: upload.size, mimeType, sha256: upload.sha256, thumbnails, createdAt: nowIso() });
      });
      try {
        for (const [variant, f] of made) await put(id, variant, f);
        await put(id, 'original', file);
      } catch (e) {
        await removeAll([id]);
        throw e;
      } finally {
        for (const [, f] of made) fs.rmSync(f, { force: true });
      }
      return { id, name: upload.name.slice(0, 255) || 'file', size: upload.size, mimeType, thumbnails };
    },
    /** The API value of a stored attachment: signed URLs valid 1 h (one HMAC each, no database read). */
    apiValue(stored: { id: string; name: string; size: number; mime_type: string; thumbs?: Thumbs }, nowMs = Date.now()) {
      // The expiry is rounded to the minute, so one page's URLs (and repeated reads within a minute) are identical.
      const exp = Math.floor(nowMs / 60_000) * 60 + URL_TTL_S;
      const t = stored.thumbs;
      return {
        id: stored.id, name: stored.name, size: stored.size, mime_type: stored.mime_type, url: signedUrl(stored.id, 'original', exp),
        thumbnails: t ? { small: { url: signedUrl(stored.id, 'small', exp), ...t.small }, large: { url: signedUrl(stored.id, 'large', exp), ...t.large } } : null,
      };
    },
    /** A signed download: 403 for a changed or expired signature; the stream, type and headers to answer with. */
    async download(id: string, variant: string, exp: number, sig: string | null) {
      if (!['original', 'small', 'large'].includes(variant) || !signer.verify(['attachment', id, variant], exp, sig)) {
        throw new AppError('FORBIDDEN', 'The signature of this URL is wrong or has expired');
      }
      const meta = await load(id);
      if (!meta || (variant !== 'original' && !meta.thumbnails)) throw new AppError('NOT_FOUND', 'No such attachment');
      const v = variant as Variant;
      const size = v === 'original' ? meta.size : onDisk ? fs.statSync(diskPath(id, v)).size : undefined;
      return { meta, body: open(id, v), mimeType: v === 'original' ? meta.mimeType : 'image/webp', size };
    },
    /**
     * Removes files older than an hour that no record refers to. `referenced` answers which of the given ids something
     * still holds (the records' attachment columns; at merge, also the trash's payloads).
     */
    async sweep(referenced: (ids: string[]) => Promise<Set<string>>, nowMs = Date.now()) {
      const cutoff = new Date(nowMs - 3_600_000).toISOString();
      const old = await store.db.select({ id: attachments.id }).from(attachments).where(lt(attachments.createdAt, cutoff)).orderBy(asc(attachments.createdAt)).limit(1000);
      const held = await referenced(old.map((r) => r.id));
      const gone = old.map((r) => r.id).filter((id) => !held.has(id));
      if (!gone.length) return 0;
      await removeAll(gone);
      return gone.length;
    },
  };
}
export type AttachmentService = ReturnType<typeof createAttachmentService>;
