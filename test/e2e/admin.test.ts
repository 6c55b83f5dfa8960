// Browser end-to-end tests of the administration and workflow pages: OAuth application secret shown once, a bad plugin package's problems, running a script plugin, the workflows page.
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, EXAMPLES, expectTestId, packPlugin, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

/** The text a read-only value shows, whether the page renders it as an input or as text. */
async function shownValue(loc: Locator): Promise<string> {
  const tag = await loc.evaluate((el) => el.tagName);
  return (tag === 'INPUT' || tag === 'TEXTAREA' ? await loc.inputValue() : (await loc.textContent()) ?? '').trim();
}

describeE2E('admin pages in a real browser', () => {
  let e2e: E2E;
  let baseId: string;
  let tableId: string;

  beforeAll(async () => {
    e2e = await startE2E();
    baseId = await defaultBase(e2e);
    const table = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Orders', fields: [{ name: 'Item', type: 'text' }, { name: 'Amount', type: 'number' }],
    }, 201);
    tableId = table.id;
    await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records/batch`, {
      action: 'create', records: [{ fields: { Item: 'pen', Amount: 2 } }, { fields: { Item: 'ink', Amount: 5 } }, { fields: { Item: 'pad', Amount: 7 } }],
    }, 200);
    await uiLogin(e2e.page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('registers an OAuth application and shows its secret once, never on reopening', async () => {
    const { page } = e2e;
    await page.goto(`${e2e.url}/admin/apps`);
    await (await expectTestId(page, 'new-app', 'admin apps page')).click();
    await expectTestId(page, 'app-create-dialog', 'register application dialog');
    await page.locator('[data-testid="app-name-input"]').fill('Reporting bot');
    await page.locator('[data-testid="app-callback-input"]').fill('https://reports.example.com/callback');
    await page.locator(`[data-testid="app-base-${baseId}"]`).check();
    await page.locator('[data-testid="app-create-submit"]').click();

    await expectTestId(page, 'secret-dialog', 'client secret dialog');
    const secret = await shownValue(page.locator('[data-testid="client-secret"]'));
    const clientId = await shownValue(page.locator('[data-testid="client-id"]'));
    expect(secret.length).toBeGreaterThanOrEqual(20);
    await expect(page.locator('[data-testid="secret-warning"]').textContent()).resolves.toMatch(/not see it again/i);
    await screenshot(page, 'admin-apps-secret');

    // The secret works: the client-credentials grant accepts it.
    const grant = await fetch(`${e2e.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
    });
    expect(grant.status).toBe(200);

    await page.locator('[data-testid="secret-done"]').click();
    await expect.poll(() => page.locator('[data-testid="secret-dialog"]').count()).toBe(0);

    // Reopening the application, from the list, shows no secret anywhere.
    await page.goto(`${e2e.url}/admin/apps`);
    const row = page.locator('[data-testid="app-row"][data-name="Reporting bot"]');
    await row.waitFor();
    await row.locator('[data-testid="app-link"]').click();
    await expectTestId(page, 'app-detail-page', 'OAuth application detail page');
    await expect.poll(() => page.locator('[data-testid="app-detail-page"]').textContent()).toContain(clientId);
    expect(await page.locator('[data-testid="client-secret"]').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it('uploads and enables the row-stats script plugin, runs it and shows its result', async () => {
    const { page } = e2e;
    await page.goto(`${e2e.url}/admin/plugins`);
    await expectTestId(page, 'plugins-page', 'admin plugins page');
    await page.locator('[data-testid="plugin-file"]').setInputFiles({
      name: 'row-stats.stplugin.zip', mimeType: 'application/zip', buffer: await packPlugin(path.join(EXAMPLES, 'row-stats')),
    });
    await page.locator('[data-testid="plugin-upload-button"]').click();
    const row = page.locator('[data-testid="plugin-row"][data-id="com.example.row-stats"]');
    await row.waitFor();
    await row.locator('[data-testid="plugin-enable"]').click();
    await page.locator('[data-testid="plugin-row"][data-id="com.example.row-stats"][data-status="enabled"]').waitFor();

    await row.locator('[data-testid="plugin-link"]').click();
    await page.waitForURL(/\/admin\/plugins\/com\.example\.row-stats/);
    // The run panel sits behind the detail page's "Run" tab.
    await (await expectTestId(page, 'tab-run', 'plugin detail page, Run tab')).click();
    await expectTestId(page, 'plugin-run', 'script plugin run panel');
    await page.locator('[data-testid="run-base"]').selectOption(baseId);
    await page.locator(`[data-testid="run-table"] option[value="${tableId}"]`).waitFor({ state: 'attached' });
    await page.locator('[data-testid="run-table"]').selectOption(tableId);
    await page.locator('[data-testid="run-plugin"]').click();
    const result = page.locator('[data-testid="run-result"]');
    await result.waitFor({ timeout: 60_000 });
    expect(await result.getAttribute('data-status')).toBe('completed');
    const value = await page.locator('[data-testid="run-result-value"]').textContent();
    expect(value).toMatch(/"count":\s*3/);
    expect(value).toContain(tableId);
    await expect(page.locator('[data-testid="run-logs"]').textContent()).resolves.toContain('counted 3 records');
    await screenshot(page, 'admin-plugin-run');
  });

  it('uploads a bad plugin package and lists every problem beside the installed ones', async () => {
    const { page } = e2e;
    // Three faults at once: not SemVer, an entry file that is not in the package, a side-panel without its toolbar-button.
    const bad = await packPlugin(path.join(EXAMPLES, 'record-tagger'), {
      manifest: (m) => ({ ...m, id: 'com.example.broken', version: 'one', entry: 'missing.js', extensionPoints: [{ type: 'side-panel', title: 'Lonely' }] }),
    });
    await page.goto(`${e2e.url}/admin/plugins`);
    await expectTestId(page, 'plugins-page', 'admin plugins page');
    await page.locator('[data-testid="plugin-file"]').setInputFiles({ name: 'broken.stplugin.zip', mimeType: 'application/zip', buffer: bad });
    await page.locator('[data-testid="plugin-upload-button"]').click();
    await expectTestId(page, 'package-problems', 'package problems list');
    const problems = await page.locator('[data-testid="package-problem"]').allTextContents();
    const text = problems.join('\n');
    expect(problems.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/version/);
    expect(text).toMatch(/missing\.js/);
    expect(text).toMatch(/side-panel|toolbar-button/);
    await screenshot(page, 'admin-plugins-problems');
    // Nothing was stored.
    const list = await e2e.admin.data('GET', '/api/plugins', undefined, 200);
    expect(list.map((p: { id: string }) => p.id)).not.toContain('com.example.broken');
  });

  it('shows the workflows page of a base', async () => {
    const { page } = e2e;
    // A workflow to show, made through the API (the workflow editor is tested by its own engineers).
    await e2e.admin.data('POST', '/api/v1/workflows', {
      name: 'Flag big orders', table_id: tableId, trigger: { type: 'record_created', config: { condition: { field: 'Amount', operator: 'gt', value: 100 } } },
      nodes: [{ id: 'flag', type: 'update_record', config: { fields: { Item: '{{record.Item}} (big)' } } }],
    }, 201);
    await page.goto(`${e2e.url}/bases/${baseId}/workflows`);
    await expectTestId(page, 'workflows-page', 'workflows page');
    await page.locator('[data-testid="workflows-table"]', { hasText: 'Flag big orders' }).waitFor();
    await screenshot(page, 'workflows');
  });
});
