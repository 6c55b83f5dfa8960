// Files served from memory (the web app, the API docs' assets): content type by extension, an ETag with 304 answers, and
// brotli or gzip made once per file off the event loop (a 3.5 MB bundle at brotli's top quality would block for seconds).
import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2', '.txt': 'text/plain; charset=utf-8',
};

export interface Asset {
  type: string;
  etag: string;
  raw: Buffer;
  compressible: boolean;
  /** Compressed forms, made on the first request that takes them (most assets are never asked for by tests). */
  br?: Promise<Buffer>;
  gzip?: Promise<Buffer>;
}

/** An asset of a file named `name` (its extension gives the type) holding `raw`. */
export function makeAsset(name: string, raw: Buffer): Asset {
  const type = TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
  return {
    type, raw, etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
    compressible: /text|javascript|json|svg/.test(type) && raw.length > 512,
  };
}

/** Answers a GET or HEAD for an asset: 304 when the client has it, else its bytes, compressed when the client takes it. */
export async function sendAsset(a: Asset, request: Request, cacheControl: string, extra: Record<string, string> = {}): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': a.type, etag: a.etag, vary: 'accept-encoding', 'x-content-type-options': 'nosniff', 'cache-control': cacheControl, ...extra,
  };
  if (request.headers.get('if-none-match') === a.etag) return new Response(null, { status: 304, headers });
  const accept = request.headers.get('accept-encoding') ?? '';
  let body = a.raw;
  if (a.compressible && /\bbr\b/.test(accept)) {
    body = await (a.br ??= brotliAsync(a.raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: a.raw.length } }));
    headers['content-encoding'] = 'br';
  } else if (a.compressible && /\bgzip\b/.test(accept)) {
    body = await (a.gzip ??= gzipAsync(a.raw, { level: 9 }));
    headers['content-encoding'] = 'gzip';
  }
  return new Response(request.method === 'HEAD' ? null : (body as unknown as BodyInit), { headers });
}
