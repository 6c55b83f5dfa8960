// GET of the signed attachment content URLs (contract section 16): the signature is the credential, the answer the bytes.
import { Readable } from 'node:stream';
import { AppError } from './errors.js';
import type { AttachmentService } from './domain/attachments.js';
import type { RequestState } from './log.js';

const CONTENT = /^\/api\/v1\/attachments\/(att[0-9A-Za-z]{16})\/content$/;
const INLINE = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** `attachment` (or `inline` for images) with an ASCII fallback name and the exact one as RFC 5987 `filename*`. */
export function contentDisposition(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function createAttachmentHttp(attachments: AttachmentService) {
  return {
    /** Answers GET and HEAD of a signed content URL; undefined for any other path. */
    async handle(request: Request, url: URL, state: RequestState): Promise<Response | undefined> {
      const p = url.pathname;
      const m = CONTENT.exec(p);
      if (!m) return undefined;
      state.route = '/api/v1/attachments/{attachment_id}/content';
      if (request.method !== 'GET' && request.method !== 'HEAD') throw new AppError('METHOD_NOT_ALLOWED', 'Use GET', { headers: { allow: 'GET, HEAD' } });
      // The signature is the credential (URLs go into <img> tags): no bearer token is asked for.
      const q = url.searchParams;
      const variant = q.get('variant') ?? 'original';
      const file = await attachments.download(m[1], variant, Number(q.get('exp')), q.get('sig'));
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
/** The content route in the v1 OpenAPI document (served here, outside the route table: its answer is the file's bytes). */
export const ATTACHMENT_OPENAPI_PATHS: Record<string, Record<string, unknown>> = {
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
