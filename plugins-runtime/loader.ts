// Builds the sandbox loader page of a ui plugin, its Content-Security-Policy, and locates the Vue and SDK files it loads.
import { createRequire } from 'node:module';
import path from 'node:path';
import { projectPath } from '../src/project-root.js';

export interface LoaderOptions {
  /** Page title, normally the plugin's display name. */
  title: string;
  /** Signed URL of the Vue 3 global build (window.Vue). */
  vueUrl: string;
  /** Signed URL of browser/table-sdk.js (window.TableSDK). */
  sdkUrl: string;
  /** Signed URLs of manifest `assets.styles`, in manifest order. */
  styles: string[];
  /** Signed URLs of manifest `assets.scripts`, in manifest order. */
  scripts: string[];
  /** Signed URL of the manifest `entry` file. */
  entryUrl: string;
  /** Every package file path mapped to its signed URL, read by TableSDK.assetUrl(path). */
  assets: Record<string, string>;
  /** Optional CSP nonce put on every script and link element. */
  nonce?: string;
}

/**
 * Content-Security-Policy for the loader and every package file it references.
 * `sandbox allow-scripts` without allow-same-origin gives the page an opaque origin even when opened directly,
 * and `connect-src 'none'` is spelled out so the postMessage bridge is the plugin's only way out.
 * `'unsafe-eval'` lets Vue's runtime template compiler (which builds render functions with Function) work; it runs
 * inside the opaque-origin sandbox, which holds no credentials and can reach nothing.
 */
export const LOADER_CSP: string = [
  'sandbox allow-scripts',
  "default-src 'none'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'none'",
  "frame-ancestors 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

// Inside <script> the HTML parser only looks for "</script" and "<!--"; escaping < > & keeps package file
// names from ending the element early, and JSON.parse reads the \u escapes back unchanged.
function jsonForScriptTag(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Returns the loader HTML: styles in the head, then the #app mount element, Vue, the SDK, the asset map, the plugin's scripts and its entry. */
export function renderLoader(opts: LoaderOptions): string {
  const nonce = opts.nonce ? ` nonce="${escapeHtml(opts.nonce)}"` : '';
  // Classic scripts, not modules: they run in document order, and a module fetch from an opaque origin would need CORS.
  const script = (url: string) => `<script src="${escapeHtml(url)}"${nonce}></script>`;
  const assets = Object.fromEntries(Object.entries(opts.assets ?? {}).filter(([, url]) => typeof url === 'string'));
  const lines = [
    '<!doctype html>',
    '<html>',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // The loader URL carries the handshake token; keep it out of Referer headers of the page's own requests.
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(opts.title)}</title>`,
    ...opts.styles.map((url) => `<link rel="stylesheet" href="${escapeHtml(url)}"${nonce}>`),
    '</head>',
    '<body>',
    '<div id="app"></div>',
    script(opts.vueUrl),
    script(opts.sdkUrl),
    `<script type="application/json" id="table-sdk-assets"${nonce}>${jsonForScriptTag(assets)}</script>`,
    ...opts.scripts.map(script),
    script(opts.entryUrl),
    '</body>',
    '</html>',
    '',
  ];
  return lines.join('\n');
}

/** Absolute path of Vue's global build with the template compiler, served as window.Vue. */
export function vueGlobalBuildPath(): string {
  const pkg = createRequire(import.meta.url).resolve('vue/package.json');
  return path.join(path.dirname(pkg), 'dist', 'vue.global.prod.js');
}

/** Absolute path of the browser SDK served as window.TableSDK. */
export function sdkPath(): string {
  return projectPath('plugins-runtime', 'browser', 'table-sdk.js');
}
