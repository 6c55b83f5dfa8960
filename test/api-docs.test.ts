// The self-served documentation without a browser: /api/docs, its assets and yoga's GraphiQL page answer with the right types
// and cache headers, and the two HTML pages name no other host.
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestClient } from './helpers.js';

const ORIGIN = 'http://test.local';

/** Every absolute http(s) URL in a text whose host is not this server's. */
function foreignUrls(html: string): string[] {
  return [...html.matchAll(/https?:\/\/[^\s"'<>)]+/gi)].map((m) => m[0]).filter((u) => new URL(u).host !== new URL(ORIGIN).host);
}

/** The src and href of every script, stylesheet and icon in a page. */
function references(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/gi)].map((m) => m[1].replace(/&amp;/g, '&'));
}

describe('self-served API documentation', () => {
  let c: TestClient;
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    c.app.fetch(new Request(`${ORIGIN}${path}`, { method, headers }));

  beforeAll(async () => {
    c = await makeApp();
  });
  afterAll(async () => {
    await c?.close();
  });

  it('GET /api/docs is an HTML page with a strict policy, loading only its own assets', async () => {
    const res = await get('/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    expect(foreignUrls(html)).toEqual([]);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i); // no inline script
    const refs = references(html);
    expect(refs.length).toBeGreaterThanOrEqual(6);
    for (const ref of refs) expect(ref).toMatch(/^\/api\/docs\/assets\/[\w.-]+\?v=[\w.-]+$/);
    for (const name of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css', 'favicon-32x32.png']) {
      expect(refs.some((r) => r.startsWith(`/api/docs/assets/${name}?`))).toBe(true);
    }
    // The trailing slash is the same page; HEAD has no body.
    expect((await get('/api/docs/')).status).toBe(200);
    const head = await get('/api/docs', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('the swagger-ui start-up script shows both OpenAPI documents and turns the validator off', async () => {
    const html = await (await get('/api/docs')).text();
    const init = references(html).find((r) => r.includes('swagger-init.js'))!;
    const res = await get(init);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const js = await res.text();
    expect(js).toContain('"/api/v1/openapi.json"');
    expect(js).toContain('"/api/open/v1/openapi.json"');
    expect(js).toContain("'urls.primaryName'");
    expect(js).toContain('validatorUrl: null');
    expect(foreignUrls(js)).toEqual([]);
    // The documents it points at are served.
    for (const doc of ['/api/v1/openapi.json', '/api/open/v1/openapi.json']) expect((await get(doc)).status).toBe(200);
  });

  it('GET /graphql from a browser is GraphiQL loading React, ReactDOM and GraphiQL from this server', async () => {
    const res = await get('/graphql', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(foreignUrls(html)).toEqual([]);
    expect(html).not.toMatch(/unpkg|jsdelivr|github/i);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="[^"]*script-src &#39;self&#39;;/);
    const refs = references(html).filter((r) => r.startsWith('/'));
    for (const name of ['react.production.min.js', 'react-dom.production.min.js', 'graphiql.min.js', 'graphiql.min.css', 'graphiql-init.js']) {
      expect(refs.some((r) => r.startsWith(`/api/docs/assets/${name}?`))).toBe(true);
    }
    const init = await (await get(refs.find((r) => r.includes('graphiql-init.js'))!)).text();
    expect(init).toContain("createFetcher({ url: '/graphql' })");
    expect(init).toContain('isHeadersEditorEnabled: true');
    // GraphQL requests themselves are unchanged.
    const q = await c.graphql('{ __typename }', undefined, null);
    expect(q.status).toBe(200);
    expect(q.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('every asset the two pages load answers 200 with its type, a year of caching and an ETag', async () => {
    const docs = await (await get('/api/docs')).text();
    const graphiql = await (await get('/graphql', { accept: 'text/html' })).text();
    const refs = [...new Set([...references(docs), ...references(graphiql)].filter((r) => r.startsWith('/')))];
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };
    for (const ref of refs) {
      const res = await get(ref);
      expect(res.status, ref).toBe(200);
      expect(res.headers.get('content-type'), ref).toBe(types[ref.split('?')[0].split('.').pop()!]);
      expect(res.headers.get('cache-control'), ref).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options'), ref).toBe('nosniff');
      const etag = res.headers.get('etag')!;
      expect(etag, ref).toMatch(/^"[\w-]+"$/);
      expect((await res.arrayBuffer()).byteLength, ref).toBeGreaterThan(0);
      expect((await get(ref, { 'if-none-match': etag })).status, ref).toBe(304);
    }
    // Without the current version in the URL an asset is revalidated rather than kept.
    const bare = await get('/api/docs/assets/swagger-ui-bundle.js');
    expect(bare.status).toBe(200);
    expect(bare.headers.get('cache-control')).toBe('no-cache');
  });

  it('compresses scripts and styles for clients that take it', async () => {
    const plain = Buffer.from(await (await get('/api/docs/assets/graphiql.min.css')).arrayBuffer());
    const br = await get('/api/docs/assets/graphiql.min.css', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(plain)).toBe(true);
    const gz = await get('/api/docs/assets/graphiql.min.css', { 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).equals(plain)).toBe(true);
    // Images are not compressed again.
    expect((await get('/api/docs/assets/favicon-32x32.png', { 'accept-encoding': 'br' })).headers.get('content-encoding')).toBeNull();
  });

  it('an unknown asset is a 404, and the pages take only GET and HEAD', async () => {
    for (const path of ['/api/docs/assets/nope.js', '/api/docs/assets/../package.json', '/api/docs/assets/swagger-ui-bundle.js.map',
      '/api/docs/assets/constructor', '/api/docs/assets/__proto__', '/api/docs/assets/', '/api/docs/other']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
    }
    const post = await get('/api/docs', {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});
