// Serves the built web app (web/dist) from memory: hashed assets cached for a year,
// index.html revalidated, and every other non-API GET answered with index.html for the client-side router.
import fs from 'node:fs';
import path from 'node:path';
import { projectPath } from './project-root.js';
import { makeAsset, sendAsset, type Asset } from './static-assets.js';

export const WEB_DIST = projectPath('web', 'dist');

function load(dir: string): Map<string, Asset & { immutable: boolean }> {
  const assets = new Map<string, Asset & { immutable: boolean }>();
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const rel = `/${path.relative(dir, full).split(path.sep).join('/')}`;
        // Vite puts a content hash in every file name under /assets/.
        assets.set(rel, { ...makeAsset(entry.name, fs.readFileSync(full)), immutable: rel.startsWith('/assets/') });
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return assets;
}

export function createWebServer(dir = WEB_DIST) {
  const assets = load(dir);
  const index = assets.get('/index.html');

  const send = (asset: Asset & { immutable: boolean }, request: Request) =>
    sendAsset(asset, request, asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');

  return {
    built: !!index,
    /** Answers a GET or HEAD for the web app, or undefined when the path is not the web app's. */
    handle(request: Request, url: URL): Promise<Response> | Response | undefined {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
      const asset = assets.get(url.pathname);
      if (asset) return send(asset, request);
      if (url.pathname.startsWith('/assets/')) return new Response('Not found', { status: 404 });
      if (!index) {
        return new Response('The web app is not built: run `npm run build` (npm install does it).', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      }
      return send(index, request);
    },
  };
}
