// Serves the built web app (web/dist): compressed once at start (brotli, gzip), hashed assets cached for a year,
// index.html revalidated, and every other non-API GET answered with index.html for the client-side router.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';
import { projectPath } from './project-root.js';

export const WEB_DIST = projectPath('web', 'dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2', '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  type: string;
  etag: string;
  raw: Buffer;
  compressible: boolean;
  /** Compressed forms, made on first request (brotli at the highest quality is slow, and most assets are never asked for by tests). */
  br?: Buffer;
  gzip?: Buffer;
  immutable: boolean;
}

function load(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const raw = fs.readFileSync(full);
        const ext = path.extname(entry.name).toLowerCase();
        const type = TYPES[ext] ?? 'application/octet-stream';
        const compressible = /text|javascript|json|svg/.test(type) && raw.length > 512;
        const rel = `/${path.relative(dir, full).split(path.sep).join('/')}`;
        assets.set(rel, {
          type, raw, etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
          compressible,
          // Vite puts a content hash in every file name under /assets/.
          immutable: rel.startsWith('/assets/'),
        });
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return assets;
}

export function createWebServer(dir = WEB_DIST) {
  const assets = load(dir);
  const index = assets.get('/index.html');

  function send(asset: Asset, request: Request): Response {
    const headers: Record<string, string> = {
      'content-type': asset.type, etag: asset.etag, vary: 'accept-encoding', 'x-content-type-options': 'nosniff',
      'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
    if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
    const accept = request.headers.get('accept-encoding') ?? '';
    let body = asset.raw;
    if (asset.compressible && /\bbr\b/.test(accept)) {
      body = asset.br ??= brotliCompressSync(asset.raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
      headers['content-encoding'] = 'br';
    } else if (asset.compressible && /\bgzip\b/.test(accept)) {
      body = asset.gzip ??= gzipSync(asset.raw, { level: 9 });
      headers['content-encoding'] = 'gzip';
    }
    return new Response(request.method === 'HEAD' ? null : (body as unknown as BodyInit), { headers });
  }

  return {
    built: !!index,
    /** Answers a GET or HEAD for the web app, or undefined when the path is not the web app's. */
    handle(request: Request, url: URL): Response | undefined {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
      const asset = assets.get(url.pathname);
      if (asset) return send(asset, request);
      if (url.pathname.startsWith('/assets/')) return new Response('Not found', { status: 404 });
      if (!index) {
        return new Response('The web app is not built: run `npm run build:web` (npm start does it).', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      }
      return send(index, request);
    },
  };
}
