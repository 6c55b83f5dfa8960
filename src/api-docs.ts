// Documentation served by the process itself, with no network: the API reference at /api/docs (swagger-ui over the two OpenAPI
// documents) and the GraphiQL page yoga renders at GET /graphql, both loading their scripts and styles from installed packages
// under /api/docs/assets/ (swagger-ui-dist, react, react-dom, graphiql), never from a CDN.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { makeAsset, sendAsset, type Asset } from './static-assets.js';

const require = createRequire(import.meta.url);

export const DOCS_PATH = '/api/docs';
const ASSETS = `${DOCS_PATH}/assets/`;

/** The two documents the reference shows, in the selector's order; the first is shown unless the URL names another. */
export const OPENAPI_DOCUMENTS = [
  { url: '/api/v1/openapi.json', name: 'Table Service API v1' },
  { url: '/api/open/v1/openapi.json', name: 'Table Service Open API and OAuth' },
];

/**
 * Only this server: scripts from files (no inline script, no eval), inline styles because swagger-ui and GraphiQL set style
 * attributes, data: images and fonts because their stylesheets embed them, and requests only to this origin.
 */
const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "connect-src 'self'", "base-uri 'none'", "form-action 'self'",
].join('; ');

/** Files served from installed packages: asset name → [package, file inside the package]. */
const PACKAGE_FILES: Record<string, [string, string]> = {
  'swagger-ui.css': ['swagger-ui-dist', 'swagger-ui.css'],
  'swagger-ui-bundle.js': ['swagger-ui-dist', 'swagger-ui-bundle.js'],
  'swagger-ui-standalone-preset.js': ['swagger-ui-dist', 'swagger-ui-standalone-preset.js'],
  'favicon-16x16.png': ['swagger-ui-dist', 'favicon-16x16.png'],
  'favicon-32x32.png': ['swagger-ui-dist', 'favicon-32x32.png'],
  'react.production.min.js': ['react', 'umd/react.production.min.js'],
  'react-dom.production.min.js': ['react-dom', 'umd/react-dom.production.min.js'],
  'graphiql.min.js': ['graphiql', 'graphiql.min.js'],
  'graphiql.min.css': ['graphiql', 'graphiql.min.css'],
};

const GRAPHIQL_DEFAULT_QUERY = `# Table Service GraphQL API
#
# Most fields need a signed-in caller: get a token
# from POST /api/auth/login and enter it in the
# Headers tab below as
#   {"Authorization": "Bearer <token>"}
# Headers are not saved in this browser.
#
# Schema: Documentation Explorer (the book icon).
# REST reference: ${DOCS_PATH}
# Run: Ctrl-Enter (Cmd-Enter on a Mac).
{
  __typename
}
`;

/** Files written here: the page styles and the two pages' start-up scripts (kept out of the HTML so scripts stay 'self'). */
const GENERATED: Record<string, string> = {
  'docs.css': `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
.docs-nav { display: flex; gap: 16px; justify-content: flex-end; padding: 6px 20px; font: 14px sans-serif; background: #1b1b1b; }
.docs-nav a { color: #fff; }
body.graphiql-page { height: 100vh; overflow: hidden; background: #fff; }
html:has(body.graphiql-page) { overflow: hidden; }
#graphiql { height: 100vh; }
#graphiql .docs-logo { color: inherit; text-decoration: none; }
`,
  'swagger-init.js': `// Starts swagger-ui on the two OpenAPI documents of this server. Nothing here calls out to another host.
window.ui = SwaggerUIBundle({
  urls: ${JSON.stringify(OPENAPI_DOCUMENTS)},
  'urls.primaryName': ${JSON.stringify(OPENAPI_DOCUMENTS[0].name)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  layout: 'StandaloneLayout',
  // The default sends every document to validator.swagger.io for a badge.
  validatorUrl: null,
  queryConfigEnabled: false,
  persistAuthorization: false,
  displayRequestDuration: true,
});
`,
  'graphiql-init.js': `// Starts GraphiQL against this server's /graphql. The token goes in the Headers tab and is not stored.
(function () {
  var logo = React.createElement(GraphiQL.Logo, null,
    React.createElement('a', { className: 'docs-logo', href: ${JSON.stringify(DOCS_PATH)}, title: 'REST API reference' }, 'Table Service'));
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
    fetcher: GraphiQL.createFetcher({ url: '/graphql' }),
    defaultQuery: ${JSON.stringify(GRAPHIQL_DEFAULT_QUERY)},
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
  }, logo));
})();
`,
};

// Loaded once a process, on the first request for each (most apps built by tests never serve them).
const loaded = new Map<string, Asset>();

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function createApiDocs() {
  // Package directories and versions are looked up now, so a missing package fails at start rather than on a page view.
  const packages = new Map<string, { dir: string; version: string }>();
  for (const [pkg] of Object.values(PACKAGE_FILES)) {
    if (packages.has(pkg)) continue;
    const manifest = require.resolve(`${pkg}/package.json`);
    packages.set(pkg, { dir: path.dirname(manifest), version: String(JSON.parse(fs.readFileSync(manifest, 'utf8')).version) });
  }
  /** The version that goes into an asset's URL: a URL with the current one is cached for a year. */
  const versions = new Map<string, string>();
  for (const [name, [pkg]] of Object.entries(PACKAGE_FILES)) versions.set(name, packages.get(pkg)!.version);
  for (const [name, text] of Object.entries(GENERATED)) versions.set(name, createHash('sha256').update(text).digest('hex').slice(0, 12));

  function asset(name: string): Asset | undefined {
    let a = loaded.get(name);
    if (a) return a;
    if (Object.hasOwn(GENERATED, name)) a = makeAsset(name, Buffer.from(GENERATED[name]));
    else if (Object.hasOwn(PACKAGE_FILES, name)) {
      const [pkg, file] = PACKAGE_FILES[name];
      a = makeAsset(name, fs.readFileSync(path.join(packages.get(pkg)!.dir, file)));
    } else return undefined;
    loaded.set(name, a);
    return a;
  }

  const src = (name: string) => escapeHtml(`${ASSETS}${name}?v=${encodeURIComponent(versions.get(name)!)}`);

  const docsPage = makeAsset('index.html', Buffer.from(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Table Service API reference</title>
<link rel="stylesheet" href="${src('swagger-ui.css')}">
<link rel="stylesheet" href="${src('docs.css')}">
<link rel="icon" type="image/png" href="${src('favicon-32x32.png')}" sizes="32x32">
<link rel="icon" type="image/png" href="${src('favicon-16x16.png')}" sizes="16x16">
</head>
<body>
<nav class="docs-nav"><a href="/graphql">GraphQL (GraphiQL)</a><a href="/">Web app</a></nav>
<div id="swagger-ui"></div>
<noscript>The API reference needs JavaScript. The documents themselves: ${OPENAPI_DOCUMENTS.map((d) => `<a href="${escapeHtml(d.url)}">${escapeHtml(d.name)}</a>`).join(', ')}.</noscript>
<script src="${src('swagger-ui-bundle.js')}"></script>
<script src="${src('swagger-ui-standalone-preset.js')}"></script>
<script src="${src('swagger-init.js')}"></script>
</body>
</html>
`));

  // yoga sends this with its own headers (Content-Type: text/html only), so the policy travels in a meta element.
  const graphiqlPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Table Service GraphiQL</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${src('graphiql.min.css')}">
<link rel="stylesheet" href="${src('docs.css')}">
</head>
<body class="graphiql-page">
<div id="graphiql">Loading GraphiQL…</div>
<noscript>GraphiQL needs JavaScript; GraphQL requests go to POST /graphql.</noscript>
<script src="${src('react.production.min.js')}"></script>
<script src="${src('react-dom.production.min.js')}"></script>
<script src="${src('graphiql.min.js')}"></script>
<script src="${src('graphiql-init.js')}"></script>
</body>
</html>
`;

  return {
    /** Answers /api/docs and its assets; undefined for any other path (and for an unknown asset, which is the caller's 404). */
    handle(request: Request, url: URL): Promise<Response> | undefined {
      const p = url.pathname;
      if (p !== DOCS_PATH && !p.startsWith(`${DOCS_PATH}/`)) return undefined;
      const page = p === DOCS_PATH || p === `${DOCS_PATH}/`;
      const a = page ? docsPage : p.startsWith(ASSETS) ? asset(p.slice(ASSETS.length)) : undefined;
      if (!a) return undefined;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return Promise.resolve(new Response('Only GET and HEAD', { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' } }));
      }
      if (page) return sendAsset(a, request, 'no-cache', { 'content-security-policy': `${CSP}; frame-ancestors 'self'`, 'referrer-policy': 'same-origin' });
      // A URL carrying the asset's current version never changes; any other (an old page, a hand-typed URL) revalidates.
      const current = url.searchParams.get('v') === versions.get(p.slice(ASSETS.length));
      return sendAsset(a, request, current ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
    /** The GraphiQL page for yoga's `renderGraphiQL`: everything it loads comes from /api/docs/assets/. */
    renderGraphiQL(): string {
      return graphiqlPage;
    },
  };
}

