// Import uploads: a multipart body streamed to a file under DATA_DIR as it arrives (never held in memory), counting
// bytes against the limit and hashing them (an Idempotency-Key compares uploads by their bytes).
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { AppError } from '../src/errors.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface Spooled {
  /** The spooled file's id, which the import operation takes. */
  upload: string;
  fileName: string;
  /** The `options` part as sent (JSON text), if any. */
  options?: string;
  sha256: string;
  size: number;
  /** The type the client gave the file part (attachments trust it only for non-images). */
  mimeType?: string;
}

export interface Spool {
  write(request: Request): Promise<Spooled>;
  discard(upload: string): void;
}

async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {}); // a body left unread (too large) is not read further
  }
}

export function createSpool(dir: string, maxBytes: number, limitName = 'IMPORT_MAX_BYTES'): Spool {
  const tooLarge = (max: number) => new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${limitName} (${max} bytes)`);
  const newUpload = () => `upl_${Array.from(randomBytes(24), (b) => ALPHABET[b % 62]).join('')}`;
  const discard = (upload: string) => fs.rmSync(path.join(dir, upload), { force: true });
  return {
    discard,
    async write(request) {
      const declared = Number(request.headers.get('content-length') ?? 0);
      if (declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);
      const contentType = request.headers.get('content-type') ?? '';
      if (!/^multipart\/form-data/i.test(contentType) || !request.body) {
        throw new AppError('BAD_REQUEST', 'The upload needs a multipart/form-data body with a "file" part', { details: [{ field: 'file', message: 'required' }] });
      }
      const upload = newUpload();
      const file = path.join(dir, upload);
      let found: Omit<Spooled, 'upload' | 'options'> | undefined;
      let options: string | undefined;
      let failure: Error | undefined;
      const writes: Array<Promise<void>> = [];
      const closed: Array<Promise<unknown>> = [];
      // Read through the body's reader: a server may hand a ReadableStream of its own that Readable.fromWeb refuses.
      const source = Readable.from(bodyChunks(request.body));
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', limits: { files: 1, fileSize: maxBytes, fields: 5, fieldSize: 1 << 20 } });
      } catch {
        throw new AppError('BAD_REQUEST', 'Malformed multipart body');
      }
      parser.on('field', (name, value) => {
        if (name === 'options') options = value;
      });
      parser.on('file', (name, stream, info) => {
        if (name !== 'file') return void stream.resume();
        const hash = createHash('sha256');
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          hash.update(chunk);
        });
        stream.on('limit', () => {
          failure = tooLarge(maxBytes);
          source.destroy(failure); // stop reading the rest of a body that is too large
        });
        const out = fs.createWriteStream(file);
        // A failed pipeline rejects before a destroyed write stream has opened and closed its file: wait for the close.
        closed.push(new Promise<void>((resolve) => out.once('close', () => resolve())));
        writes.push(pipeline(stream, out).then(() => {
          found = { fileName: info.filename || 'import', sha256: hash.digest('hex'), size, mimeType: info.mimeType };
        }, (e: Error) => {
          failure ??= e; // answered below; never left as an unhandled rejection
        }));
      });
      try {
        await pipeline(source, parser);
        await Promise.all(writes);
        if (failure) throw failure;
      } catch (e) {
        // The file's write stream may still be opening (a body cut short, or too large): once it has closed, remove the file.
        await Promise.allSettled(writes);
        await Promise.all(closed);
        discard(upload);
        if (failure instanceof AppError) throw failure;
        throw new AppError('BAD_REQUEST', `Malformed multipart body: ${(e as Error).message}`);
      }
      if (failure) {
        await Promise.all(closed);
        discard(upload);
        throw failure;
      }
      if (!found) throw new AppError('BAD_REQUEST', 'The multipart body needs a "file" part', { details: [{ field: 'file', message: 'required' }] });
      return { upload, options, ...found };
    },
  };
}
