// Serves the plugin sandbox: the signed loader page per version, signed package files, and the shared runtime
// (Vue's global build and the SDK), each with the sandbox CSP so a plugin reaches nothing but the host bridge.
import fs from 'node:fs';
import path from 'node:path';
import type { PluginService } from '../src/domain/plugins/index.js';
import { LOADER_CSP, renderLoader, sdkPath, vueGlobalBuildPath } from './loader.js';

const FILE_URL_TTL = 600;
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8', '.json': 'application/json; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.ico': 'image/x-icon',
  '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.txt': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8',
};
const typeOf = (p: string) => TYPES[path.extname(p).toLowerCase()] ?? 'application/octet-stream';

const LOADER_PATH = /^\/api\/plugins\/([^/]+)\/versions\/([^/]+)\/loader\.html$/;
const FILE_PATH = /^\/api\/plugins\/([^/]+)\/versions\/([^/]+)\/files\/(.+)$/;
export const RUNTIME_PREFIX = '/api/plugins/_runtime/';

export function createPluginServer(plugins: PluginService) {
  const runtime: Record<string, { body: Buffer; type: string }> = {
    'vue.global.js': { body: fs.readFileSync(vueGlobalBuildPath()), type: TYPES['.js'] },
    'table-sdk.js': { body: fs.readFileSync(sdkPath()), type: TYPES['.js'] },
  };

  function fileUrl(id: string, version: string, file: string, exp: number): string {
    const sig = plugins.signer.sign(['file', id, version, file], exp);
    const encoded = file.split('/').map(encodeURIComponent).join('/');
    return `/api/plugins/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}/files/${encoded}?exp=${exp}&sig=${sig}`;
  }

  const sandboxed = (body: string | Buffer, type: string, extra: Record<string, string> = {}) =>
    new Response(body as BodyInit, {
      headers: {
        'content-type': type, 'content-security-policy': LOADER_CSP, 'x-content-type-options': 'nosniff',
        'cache-control': 'private, no-store', 'referrer-policy': 'no-referrer', ...extra,
      },
    });
  const refused = (message: string) => new Response(message, { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-security-policy': LOADER_CSP } });
  const missing = () => new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });

  return {
    /** Answers the request when it is a sandbox URL, else undefined (manifests and files are read from the database). */
    async handle(url: URL): Promise<Response | undefined> {
      if (url.pathname.startsWith(RUNTIME_PREFIX)) {
        const asset = runtime[url.pathname.slice(RUNTIME_PREFIX.length)];
        if (!asset) return missing();
        return new Response(asset.body as unknown as BodyInit, { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' } });
      }
      const exp = Number(url.searchParams.get('exp'));
      const sig = url.searchParams.get('sig');
      let m = LOADER_PATH.exec(url.pathname);
      if (m) {
        const [id, version] = [decodeURIComponent(m[1]), decodeURIComponent(m[2])];
        const ht = url.searchParams.get('ht') ?? '';
        if (!plugins.signer.verify(['loader', id, version, ht], exp, sig)) return refused('The loader URL is missing, altered or expired');
        const manifest = await plugins.manifestOf(id, version);
        if (!manifest || manifest.type !== 'ui') return missing();
        // Files are signed for as long as the loader itself, so the page works for its whole life.
        const assets: Record<string, string> = {};
        for (const f of await plugins.filesOf(id, version)) assets[f] = fileUrl(id, version, f, exp || Math.floor(Date.now() / 1000) + FILE_URL_TTL);
        const html = renderLoader({
          title: manifest.name,
          vueUrl: `${RUNTIME_PREFIX}vue.global.js`,
          sdkUrl: `${RUNTIME_PREFIX}table-sdk.js`,
          styles: (manifest.assets?.styles ?? []).map((s: string) => assets[s]),
          scripts: (manifest.assets?.scripts ?? []).map((s: string) => assets[s]),
          entryUrl: assets[manifest.entry],
          assets,
        });
        return sandboxed(html, TYPES['.html']);
      }
      m = FILE_PATH.exec(url.pathname);
      if (m) {
        let id: string, version: string, file: string;
        try {
          [id, version, file] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]), m[3].split('/').map(decodeURIComponent).join('/')];
        } catch {
          return missing();
        }
        if (!plugins.signer.verify(['file', id, version, file], exp, sig)) return refused('The file URL is missing, altered or expired');
        const body = await plugins.file(id, version, file);
        if (!body) return missing();
        return sandboxed(body, typeOf(file));
      }
      return undefined;
    },
  };
}
