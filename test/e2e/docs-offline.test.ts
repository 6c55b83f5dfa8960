// Browser end-to-end test of the self-served documentation with the network cut off: the API reference at /api/docs (both OpenAPI
// documents) and GraphiQL at /graphql render and work from this server alone, and the browser never tries another host.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_FLAGS, describeE2E, poll, screenshot } from '../e2e-helpers.js';
import { login, removeDir, SERVER_ADMIN, startServer, type ServerProcess } from '../server-process.js';

describeE2E('API reference and GraphiQL in a real browser, offline', () => {
  let server: ServerProcess;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  /** Requests the browser attempted to any host other than the server (all aborted). */
  const foreign: string[] = [];
  /** Page errors, Content-Security-Policy violations and same-origin GETs answered 400 and above. */
  const problems: string[] = [];
  /** Other console errors: shown, not failed on. */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    server = await startServer();
    const host = new URL(server.url).host;
    const ours = (u: string) => {
      const url = new URL(u);
      return url.protocol === 'data:' || url.protocol === 'blob:' || url.host === host;
    };
    const { chromium } = await import('playwright-core');
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ts-e2e-chromium-'));
    // A fresh profile: nothing cached or stored from an earlier run.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1360, height: 820 },
    });
    context.setDefaultTimeout(30_000);
    // The network is cut off: only the server under test answers; everything else is recorded and aborted.
    context.on('request', (r) => {
      if (!ours(r.url())) foreign.push(`${r.method()} ${r.url()}`);
    });
    await context.route('**/*', (route) => (ours(route.request().url()) ? route.continue() : route.abort('internetdisconnected')));
    context.on('response', (r) => {
      // GETs are the pages and their assets; a POST /graphql without a token is refused on purpose below.
      if (r.status() >= 400 && r.request().method() === 'GET' && ours(r.url())) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
    // Violations of the page's policy, from the page itself (a script the policy blocks would otherwise just be missing).
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`);
      });
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (/CSP violation|Content Security Policy/i.test(m.text())) problems.push(m.text());
      else consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  }, 120_000);

  afterAll(async () => {
    if (consoleErrors.length) console.warn(`browser console errors:\n${consoleErrors.join('\n')}`);
    await context?.close().catch(() => {});
    await server?.stop();
    removeDir(profile);
    removeDir(server?.dataDir);
  });

  /** Rendering the API reference takes longest of the pages: 20 s. */
  const slowPoll = <T>(fn: () => Promise<T>) => poll(fn, 20_000);
  const operationPath = (p: string) => page.locator(`#swagger-ui .opblock-summary-path[data-path="${p}"]`);

  it('shows the v1 document at /api/docs, and the Open API document once chosen in the selector', async () => {
    await page.goto(`${server.url}/api/docs`);
    await operationPath('/api/v1/tables').first().waitFor();
    await slowPoll(() => page.locator('#swagger-ui .information-container .title').innerText()).toContain('Table Service API v1');
    expect(await page.locator('#swagger-ui').innerText()).toContain('/api/v1/tables');
    expect(await operationPath('/api/v1/tables/{table_id}/fields').count()).toBeGreaterThan(0);
    // An operation opens with its parameters and answer schema, rendered from the document alone.
    await operationPath('/api/v1/tables/{table_id}').first().click();
    await page.locator('#swagger-ui .opblock.is-open .parameters-container, #swagger-ui .opblock.is-open .parameters').first().waitFor();
    await page.locator('#swagger-ui .opblock.is-open .responses-wrapper').first().waitFor();
    // No validator badge (it would have sent the document to validator.swagger.io).
    expect(await page.locator('#swagger-ui .validator-badge, #swagger-ui img[src*="validator"]').count()).toBe(0);
    await operationPath('/api/v1/tables/{table_id}').first().click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'api-docs');

    const select = page.locator('#swagger-ui .topbar select');
    expect(await select.locator('option').allInnerTexts()).toEqual(['Table Service API v1', 'Table Service Open API and OAuth']);
    await select.selectOption({ label: 'Table Service Open API and OAuth' });
    await operationPath('/api/open/v1/bases/{base_id}/tables/{table_id}/records').first().waitFor();
    await slowPoll(() => page.locator('#swagger-ui .information-container .title').innerText()).toContain('Table Service Open API and OAuth');
    expect(await operationPath('/api/oauth/token').count()).toBeGreaterThan(0);
    expect(await operationPath('/api/v1/tables').count()).toBe(0);

    // The choice is in the address, so reloading (or sharing the link) shows the same document.
    expect(new URL(page.url()).searchParams.get('urls.primaryName')).toBe('Table Service Open API and OAuth');
    await page.reload();
    await operationPath('/api/open/v1/bases').first().waitFor();
    expect(await operationPath('/api/v1/tables').count()).toBe(0);

    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  /** Replaces the text of one of GraphiQL's CodeMirror editors. */
  const setEditor = (selector: string, text: string) =>
    page.locator(selector).first().evaluate((el, value) => (el as unknown as { CodeMirror: { setValue(v: string): void } }).CodeMirror.setValue(value), text);
  const resultText = () => page.locator('.graphiql-container .result-window').innerText();

  it('renders GraphiQL at /graphql, runs a query, and takes a bearer token in the headers editor', async () => {
    await page.goto(`${server.url}/graphql`);
    await page.locator('.graphiql-container .graphiql-query-editor .CodeMirror').waitFor();
    // The default query explains where the token goes; the headers tab is the one open.
    await slowPoll(() => page.locator('.graphiql-query-editor').innerText()).toContain('Authorization');
    await slowPoll(() => page.locator('.graphiql-editor-tools button[data-name="headers"]').getAttribute('class')).toContain('active');

    // The default query needs no token.
    await page.locator('.graphiql-execute-button').click();
    await slowPoll(resultText).toContain('"__typename": "Query"');
    await screenshot(page, 'graphiql');
    // The schema came through introspection from this server: the documentation explorer lists the root type.
    await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click();
    await slowPoll(() => page.locator('.graphiql-doc-explorer').innerText()).toContain('Query');

    // Without a token the signed-in fields are refused; with one pasted into the headers editor they answer.
    await setEditor('.graphiql-query-editor .CodeMirror', '{\n  me {\n    email\n  }\n}\n');
    await page.locator('.graphiql-execute-button').click();
    await slowPoll(resultText).toContain('"errors"');
    const token = await login(server.url);
    await setEditor('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror', JSON.stringify({ Authorization: `Bearer ${token}` }));
    await page.locator('.graphiql-execute-button').click();
    await slowPoll(resultText).toContain(`"email": "${SERVER_ADMIN.email}"`);
    // Headers are not kept in the browser's storage.
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(token);

    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});
