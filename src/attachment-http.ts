// POST /api/v1/attachments (a streamed multipart upload) and GET of the signed content URLs (contract section 16).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AppError, forbidden, unauthorized } from './errors.js';
import { json, v1Success } from '../rest-adapters/envelopes.js';
import { createSpool } from '../rest-adapters/spool.js';
import type { Actor } from './domain/deps.js';
import type { AttachmentService } from './domain/attachments.js';
import type { RequestState } from './log.js';

const CONTENT = /^\/api\/v1\/attachments\/(att[0-9A-Za-z]{16})\/content$/;
const INLINE = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** `attachment` (or `inline` for images) with an ASCII fallback name and the exact one as RFC 5987 `filename*`. */
export function contentDisposition(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function createAttachmentHttp(o: { dataDir: string; maxBytes: number; attachments: AttachmentService; actorOf: (request: Request, state: RequestState) => Promise<Actor | null> }) {
  const incoming = path.join(o.dataDir, 'files', '.incoming');
  fs.mkdirSync(incoming, { recursive: true });
  const spool = createSpool(incoming, o.maxBytes, 'ATTACHMENT_MAX_BYTES');

  return {
    /** Answers the attachment routes; undefined for any other path. */
    async handle(request: Request, url: URL, state: RequestState): Promise<Response | undefined> {
      const p = url.pathname;
      if (p === '/api/v1/attachments') {
        state.route = p;
        if (request.method !== 'POST') throw new AppError('METHOD_NOT_ALLOWED', 'Use POST to upload an attachment', { headers: { allow: 'POST' } });
        // Any signed-in user may upload (before the body is read); the file is theirs to put into records they may edit.
        const actor = await o.actorOf(request, state);
        if (!actor) throw unauthorized();
        if (actor.kind !== 'user') throw forbidden('Attachments are uploaded by users');
        const up = await spool.write(request);
        try {
          const a = await o.attachments.create(actor.id, path.join(incoming, up.upload), { name: up.fileName, size: up.size, sha256: up.sha256, claimedType: up.mimeType });
          return json(201, v1Success({ id: a.id, name: a.name, size: a.size, mime_type: a.mimeType }), state.requestId);
        } finally {
          spool.discard(up.upload);
        }
      }
      const m = CONTENT.exec(p);
      if (!m) return undefined;
      state.route = '/api/v1/attachments/{attachment_id}/content';
      if (request.method !== 'GET' && request.method !== 'HEAD') throw new AppError('METHOD_NOT_ALLOWED', 'Use GET', { headers: { allow: 'GET, HEAD' } });
      // The signature is the credential (URLs go into <img> tags): no bearer token is asked for.
      const q = url.searchParams;
      const variant = q.get('variant') ?? 'original';
      const file = await o.attachments.download(m[1], variant, Number(q.get('exp')), q.get('sig'));
      const headers: Record<string, string> = {
        'content-type': file.mimeType,
        'content-disposition': contentDisposition(variant === 'original' ? file.meta.name : `${file.meta.name}.${variant}.webp`, INLINE.has(file.mimeType)),
        'cache-control': 'private, max-age=3600',
        'x-content-type-options': 'nosniff',
        // A file is never a page of this origin: no script of an uploaded HTML or SVG runs with its cookies or storage.
        'content-security-policy': "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
      };
      if (file.size !== undefined) headers['content-length'] = String(file.size);
      if (request.method === 'HEAD') {
        file.body.destroy();
        return new Response(null, { headers });
      }
      return new Response(Readable.toWeb(file.body) as ReadableStream, { headers });
    },
  };
}

const errorRef = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
/** The two routes in the v1 OpenAPI document (they are served here, outside the route table, to stream both ways). */
export const ATTACHMENT_OPENAPI_PATHS: Record<string, Record<string, unknown>> = {
  '/api/v1/attachments': {
    post: {
      operationId: 'uploadAttachment', tags: ['attachments'],
      summary: 'Upload a file (multipart "file", streamed, up to ATTACHMENT_MAX_BYTES, default 100 MiB); name its id in an attachment field of a record write',
      requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } } } },
      responses: {
        201: {
          description: 'Stored', content: { 'application/json': { schema: {
            type: 'object', properties: { code: { type: 'integer' }, msg: { type: 'string' }, data: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, size: { type: 'integer' }, mime_type: { type: 'string' } }, required: ['id', 'name', 'size', 'mime_type'] } },
          } } },
        },
        400: { description: 'No "file" part or a malformed body', ...errorRef }, 401: { description: 'Not signed in', ...errorRef },
        403: { description: 'Not a user (applications cannot upload)', ...errorRef }, 413: { description: 'Larger than ATTACHMENT_MAX_BYTES', ...errorRef },
      },
    },
  },
  '/api/v1/attachments/{attachment_id}/content': {
    get: {
      operationId: 'downloadAttachment', tags: ['attachments'], security: [],
      summary: 'The file (or a thumbnail, variant=small|large, as WebP) behind a signed URL from a record value, valid 1 h',
      parameters: [
        { name: 'attachment_id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'exp', in: 'query', required: true, schema: { type: 'integer' } },
        { name: 'sig', in: 'query', required: true, schema: { type: 'string' } },
        { name: 'variant', in: 'query', required: false, schema: { type: 'string', enum: ['small', 'large'] } },
      ],
      responses: {
        200: { description: 'The bytes, with their Content-Type, Content-Length and Content-Disposition', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        403: { description: 'A changed or expired signature', ...errorRef }, 404: { description: 'No such attachment (removed)', ...errorRef },
      },
    },
  },
};
