// Browser end-to-end tests of the data pages and the plugin host: sign in, a table and its fields, inline editing with the server's validation, filter, ticking, the record-tagger plugin in its sandbox.
import path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, EXAMPLES, expectTestId, installPlugin, packPlugin, screenshot, startE2E, type E2E } from '../e2e-helpers.js';
import { SERVER_ADMIN } from '../server-process.js';

const TAGGER = 'com.example.record-tagger';
/** The example at the global and base-level points: home-menu (no installation needed), base-menu and dashboard-widget. */
const EVERYWHERE = 'com.example.record-tagger-everywhere';
/** The example without records:write or storage, and with a lone toolbar-button (so it opens in a dialog) allowing one ticked record. */
const READONLY = 'com.example.record-tagger-readonly';

describeE2E('data pages and the plugin host in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;
  const ids: Record<string, string> = {};

  const cell = (recordId: string, field: string) => page.locator(`[data-testid="grid-row"][data-record-id="${recordId}"] [data-testid="cell"][data-field="${field}"]`);
  const record = async (id: string) => (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/records/${id}`, undefined, 200)).fields;

  /** The plugin iframe as a playwright Frame, once its document has loaded. */
  async function pluginFrame(pluginId: string): Promise<Frame> {
    const handle = await page.locator(`[data-testid="plugin-frame"][data-plugin-id="${pluginId}"]`).elementHandle({ timeout: 10_000 });
    const frame = await handle!.contentFrame();
    if (!frame) throw new Error(`the frame of ${pluginId} has no document`);
    await frame.waitForSelector('#app', { state: 'attached' });
    return frame;
  }

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    // The example ui plugin and a narrower variant, uploaded, enabled and installed through the API.
    await installPlugin(e2e, await packPlugin(path.join(EXAMPLES, 'record-tagger')), baseId);
    await installPlugin(e2e, await packPlugin(path.join(EXAMPLES, 'record-tagger'), {
      manifest: (m) => ({
        ...m, id: READONLY, name: 'Record tagger (read only)', permissions: { records: 'read' },
        extensionPoints: [{ type: 'toolbar-button', title: 'Tag one (read only)', requiresSelection: true, maxSelection: 1 }],
      }),
    }), baseId);
    await installPlugin(e2e, await packPlugin(path.join(EXAMPLES, 'record-tagger'), {
      manifest: (m) => ({
        ...m, id: EVERYWHERE, name: 'Everywhere tagger',
        extensionPoints: [{ type: 'home-menu', title: 'Tagger home' }, { type: 'base-menu', title: 'Tagger base' }, { type: 'dashboard-widget', title: 'Tagger widget' }],
      }),
    }));
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('signs in through the login form and lands on the bases', async () => {
    await page.goto(`${e2e.url}/`);
    await page.waitForURL(/\/login/);
    await expectTestId(page, 'email', 'login page');
    await screenshot(page, 'login');
    await page.locator('[data-testid="email"]').fill(SERVER_ADMIN.email);
    await page.locator('[data-testid="password"]').fill('wrong-password');
    await page.locator('[data-testid="sign-in"]').click();
    await expectTestId(page, 'login-error', 'login error message');
    await page.locator('[data-testid="password"]').fill(SERVER_ADMIN.password);
    await page.locator('[data-testid="sign-in"]').click();
    await expectTestId(page, 'home-page', 'home page');
    await page.locator(`[data-testid="base-card"][data-base-id="${baseId}"]`).waitFor();
    await screenshot(page, 'home');
  });

  it('creates a table and its fields through the UI', async () => {
    await page.locator(`[data-testid="base-card"][data-base-id="${baseId}"]`).click();
    await expectTestId(page, 'base-page', 'base page');
    await page.locator('[data-testid="new-table-name"]').fill('Tasks');
    await page.locator('[data-testid="create-table"]').click();
    const item = page.locator('[data-testid="table-item"]', { hasText: 'Tasks' });
    await item.waitFor();
    tableId = (await item.getAttribute('data-table-id'))!;
    await item.locator('[data-testid="table-link"]').click();
    await expectTestId(page, 'table-page', 'table page');

    for (const [name, type] of [['Notes', 'text'], ['Hours', 'number']]) {
      await page.locator('[data-testid="toolbar-add-field"]').click();
      await expectTestId(page, 'field-dialog', 'add field dialog');
      await page.locator('[data-testid="field-name"]').fill(name);
      await page.locator('[data-testid="field-type"]').selectOption(type);
      await page.locator('[data-testid="field-save"]').click();
      await page.locator(`[data-testid="column-header"][data-field="${name}"]`).waitFor();
    }
    const fields = await e2e.admin.data('GET', `/api/v1/tables/${tableId}/fields`, undefined, 200);
    const list = Array.isArray(fields) ? fields : fields.items;
    expect(list.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual(['Name:text', 'Notes:text', 'Hours:number']);
  });

  it('adds and edits records inline and shows the server\'s validation message', async () => {
    for (const name of ['alpha', 'beta', 'gamma']) {
      const before = await page.locator('[data-testid="grid-row"]').count();
      await page.locator('[data-testid="add-record"]').click();
      await expect.poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(before + 1);
      const row = page.locator('[data-testid="grid-row"]').nth(before);
      const id = (await row.getAttribute('data-record-id'))!;
      ids[name] = id;
      // Double-click the Name cell, type, Enter: the grid saves through the API.
      await cell(id, 'Name').dblclick();
      const input = cell(id, 'Name').locator('[data-testid="editor-input"]');
      await input.fill(name);
      await input.press('Enter');
      await expect.poll(async () => (await record(id)).Name).toBe(name);
    }

    // A non-number in the number field: the server refuses it and the cell shows why.
    await cell(ids.alpha, 'Hours').dblclick();
    let hours = cell(ids.alpha, 'Hours').locator('[data-testid="editor-input"]');
    await hours.fill('lots');
    await hours.press('Enter');
    const error = cell(ids.alpha, 'Hours').locator('[data-testid="cell-error"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/Hours/);
    expect((await record(ids.alpha)).Hours).toBeNull();

    // A real number is saved.
    await cell(ids.alpha, 'Hours').dblclick();
    hours = cell(ids.alpha, 'Hours').locator('[data-testid="editor-input"]');
    await hours.fill('3.5');
    await hours.press('Enter');
    await expect.poll(async () => (await record(ids.alpha)).Hours).toBe(3.5);
    await expect.poll(() => cell(ids.alpha, 'Hours').textContent()).toContain('3.5');
  });

  it('filters the grid', async () => {
    await page.locator('[data-testid="filter-button"]').click();
    await expectTestId(page, 'filter-panel', 'filter builder');
    await page.locator('[data-testid="filter-add"]').click();
    const cond = page.locator('[data-testid="filter-condition"]').first();
    const nameField = await page.locator('[data-testid="column-header"][data-field="Name"]').getAttribute('data-field-id');
    await cond.locator('[data-testid="filter-field"]').selectOption(nameField!);
    await cond.locator('[data-testid="filter-operator"]').selectOption('contains');
    await cond.locator('[data-testid="filter-value"]').fill('ta');
    // "beta" only ("alpha" has no "ta"; "gamma" neither).
    await expect.poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(1);
    expect(await page.locator('[data-testid="grid-row"]').first().getAttribute('data-record-id')).toBe(ids.beta);
    await page.locator('[data-testid="filter-clear"]').click();
    await expect.poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(3);
    await page.locator('[data-testid="filter-button"]').click();
    await expect.poll(() => page.locator('[data-testid="filter-panel"]').count()).toBe(0);
  });

  it('ticks records and opens the record tagger, which lists them and updates one through the SDK', async () => {
    const entry = page.locator(`[data-testid="plugin-entry"][data-plugin-id="${TAGGER}"]`);
    await entry.waitFor();
    // requiresSelection: nothing ticked, the entry is disabled and says why.
    expect(await entry.isDisabled()).toBe(true);
    await expect(page.locator(`[data-testid="plugin-entry"][data-plugin-id="${TAGGER}"] + [data-testid="plugin-entry-hint"]`).textContent()).resolves.toBe('Tick records first');

    await page.locator(`[data-testid="grid-row"][data-record-id="${ids.alpha}"] [data-testid="row-check"]`).check();
    await page.locator(`[data-testid="grid-row"][data-record-id="${ids.beta}"] [data-testid="row-check"]`).check();
    await expect.poll(() => page.locator('[data-testid="selection-count"]').getAttribute('data-count')).toBe('2');
    expect(await entry.isDisabled()).toBe(false);
    // maxSelection 1 on the variant: two ticked is one too many.
    const variant = page.locator(`[data-testid="plugin-entry"][data-plugin-id="${READONLY}"]`);
    expect(await variant.isDisabled()).toBe(true);
    await expect(page.locator(`[data-testid="plugin-entry"][data-plugin-id="${READONLY}"] + [data-testid="plugin-entry-hint"]`).textContent()).resolves.toBe('Tick at most 1 record');

    // The grid can refresh on this event; record it to check the bridge sends it.
    await page.evaluate(`window.__changes = []; window.addEventListener('table-service:records-changed', (e) => window.__changes.push(e.detail))`);
    await entry.click();
    await expectTestId(page, 'plugin-drawer', 'plugin drawer (toolbar-button + side-panel)');
    const frameEl = page.locator('[data-testid="plugin-drawer"] [data-testid="plugin-frame"]');
    expect(await frameEl.getAttribute('sandbox')).toBe('allow-scripts');
    expect(await frameEl.getAttribute('src')).toMatch(/\/api\/plugins\/com\.example\.record-tagger\/versions\/1\.0\.0\/loader\.html\?.*sig=/);

    const frame = page.frameLocator('[data-testid="plugin-frame"]');
    await expect.poll(() => frame.locator('h1').textContent(), { timeout: 15_000 }).toBe('2 ticked record(s)');
    expect((await frame.locator('li').allTextContents()).map((t) => t.replace(/Tag$/, ''))).toEqual(['alpha', 'beta']);
    await screenshot(page, 'table-grid-plugin-drawer');

    await frame.locator(`li[data-id="${ids.beta}"] button`).click();
    await frame.locator(`li[data-id="${ids.beta}"] button`, { hasText: 'Tagged' }).waitFor();
    expect((await record(ids.beta)).Notes).toBe('tagged');
    expect((await record(ids.alpha)).Notes).toBeNull();
    // storage.set runs after the update (records:write and storage declared), once the button already says Tagged.
    const lastTagged = async () => (await e2e.admin.data('POST', `/api/plugins/${TAGGER}/rpc`, { base_id: baseId, method: 'storage.get', params: { key: 'last-tagged' } }, 200)).result;
    await expect.poll(lastTagged, { timeout: 5_000 }).toBe(ids.beta);
    expect(await page.evaluate('window.__changes')).toEqual([
      { tableId, baseId, pluginId: TAGGER, method: 'record.update', recordId: ids.beta },
    ]);
  });

  it('keeps the plugin away from the host: opaque origin, no cookies, no storage, no parent DOM', async () => {
    // Something worth stealing on the host origin: a cookie; localStorage already holds the user's token.
    await page.evaluate(`document.cookie = 'host-secret=s3cret; path=/'`);
    expect(await page.evaluate('localStorage.getItem("table-service.token")')).toBeTruthy();
    const frame = await pluginFrame(TAGGER);
    const seen = await frame.evaluate(`(() => {
      const t = (fn) => { try { return { ok: true, value: String(fn()) }; } catch (e) { return { ok: false, error: e.name }; } };
      return {
        origin: self.origin,
        cookie: t(() => document.cookie),
        localStorage: t(() => localStorage.getItem('table-service.token')),
        sessionStorage: t(() => sessionStorage.length),
        parentDocument: t(() => window.parent.document.body.innerHTML.length),
        parentStorage: t(() => window.parent.localStorage.getItem('table-service.token')),
        topLocation: t(() => window.top.location.href),
      };
    })()`) as Record<string, any>;
    expect(seen.origin).toBe('null');
    // Reading cookies in an opaque origin throws in Chromium; an empty string would be as good.
    expect(seen.cookie.ok ? seen.cookie.value : '').toBe('');
    expect(seen.localStorage).toEqual({ ok: false, error: 'SecurityError' });
    expect(seen.sessionStorage).toEqual({ ok: false, error: 'SecurityError' });
    expect(seen.parentDocument).toEqual({ ok: false, error: 'SecurityError' });
    expect(seen.parentStorage).toEqual({ ok: false, error: 'SecurityError' });
    expect(seen.topLocation).toEqual({ ok: false, error: 'SecurityError' });
  });

  it('answers only this frame\'s window with this open\'s token', async () => {
    const frame = await pluginFrame(TAGGER);
    // From inside the frame: a wrong token and another channel get no answer; the right token does.
    const fromFrame = await frame.evaluate(`new Promise((resolve) => {
      const ht = new URLSearchParams(location.search).get('ht');
      const got = {};
      addEventListener('message', (e) => { const d = e.data; if (d && d.type === 'response' && d.id >= 900) got[d.id] = d.error ? d.error.code : 'answered'; });
      const ask = (id, token, channel) => parent.postMessage({ channel, token, type: 'request', id, method: 'ui.getContext', params: {} }, '*');
      ask(901, 'not-the-token', 'table-sdk');
      ask(902, ht, 'another-channel');
      ask(903, ht, 'table-sdk');
      setTimeout(() => resolve(got), 1000);
    })`);
    expect(fromFrame).toEqual({ 903: 'answered' });

    // From the host page itself (or anything that is not the frame's window) with the right token: ignored.
    await frame.evaluate(`window.__late = []; addEventListener('message', (e) => { if (e.data && e.data.id === 904) window.__late.push(e.data); })`);
    await page.evaluate(`(() => {
      const el = document.querySelector('[data-testid="plugin-frame"]');
      const ht = new URL(el.src).searchParams.get('ht');
      window.postMessage({ channel: 'table-sdk', token: ht, type: 'request', id: 904, method: 'ui.getContext', params: {} }, '*');
    })()`);
    await page.waitForTimeout(500);
    expect(await frame.evaluate('window.__late')).toEqual([]);

    // ui.notify is shown by the host; backend.call is relayed to POST /call/{name} and its error code comes back.
    await frame.evaluate(`TableSDK.ui.notify({ message: 'Hello from the sandbox', type: 'success' })`);
    await expect.poll(() => page.locator('[data-testid="plugin-toast"]', { hasText: 'Hello from the sandbox' }).count()).toBe(1);
    expect(await frame.evaluate(`TableSDK.backend.call({ name: 'summary', payload: {} }).then(() => 'answered', (e) => e.code)`)).toBe('ENDPOINT_NOT_DECLARED');
    // network.fetch does not exist for a plugin without the network permission.
    expect(await frame.evaluate(`[typeof TableSDK.network, '' + Object.keys(TableSDK.permissions).sort()]`)).toEqual(['undefined', 'records,storage,tables']);

    // selection.get is the snapshot taken at opening, ids only.
    const snapshot = await frame.evaluate(`TableSDK.selection.get()`) as Record<string, unknown>;
    expect(snapshot).toMatchObject({ recordIds: [ids.alpha, ids.beta], total: 2, truncated: false, selectAll: false, scope: 'page' });
  });

  it('refuses a method whose permission the manifest does not declare (PERMISSION_DENIED)', async () => {
    await page.locator('[data-testid="plugin-drawer"] [data-testid="plugin-close"]').click();
    await expect.poll(() => page.locator('[data-testid="plugin-drawer"]').count()).toBe(0);
    await page.locator(`[data-testid="grid-row"][data-record-id="${ids.alpha}"] [data-testid="row-check"]`).uncheck();
    await expect.poll(() => page.locator('[data-testid="selection-count"]').getAttribute('data-count')).toBe('1');

    const variant = page.locator(`[data-testid="plugin-entry"][data-plugin-id="${READONLY}"]`);
    expect(await variant.isDisabled()).toBe(false);
    await variant.click();
    // A lone toolbar-button opens its plugin in a dialog.
    await expectTestId(page, 'plugin-dialog', 'plugin dialog (lone toolbar-button)');
    const frame = page.frameLocator('[data-testid="plugin-dialog"] [data-testid="plugin-frame"]');
    await expect.poll(() => frame.locator('h1').textContent(), { timeout: 15_000 }).toBe('1 ticked record(s)');
    await frame.locator(`li[data-id="${ids.beta}"] button`).click();
    const error = frame.locator('[data-testid="error"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^PERMISSION_DENIED: /);
    expect((await record(ids.beta)).Notes).toBe('tagged');

    // storage without the storage permission, straight through the SDK.
    const f = await pluginFrame(READONLY);
    const code = await f.evaluate(`TableSDK.storage.get({ key: 'x' }).then(() => 'answered', (e) => e.code)`);
    expect(code).toBe('PERMISSION_DENIED');

    // A frame that navigates (here: reloads) is no longer the document this open was granted to: the host cuts it off.
    await f.evaluate('setTimeout(() => location.reload(), 0)');
    const cut = page.locator('[data-testid="plugin-dialog"] [data-testid="plugin-open-error"]');
    await cut.waitFor();
    expect(await cut.textContent()).toMatch(/left its page/);
    expect(await page.locator('[data-testid="plugin-dialog"] [data-testid="plugin-frame"]').count()).toBe(0);
    await page.locator('[data-testid="plugin-dialog"] [data-testid="plugin-close"]').click();
    await expect.poll(() => page.locator('[data-testid="plugin-dialog"]').count()).toBe(0);
  });

  it('shows global and base-level entries: home-menu opens a dialog, dashboard-widget opens inline', async () => {
    await page.goto(`${e2e.url}/`);
    await expectTestId(page, 'home-page', 'home page');
    const home = page.locator(`[data-testid="plugin-entry"][data-plugin-id="${EVERYWHERE}"][data-point="home-menu"]`);
    await home.click();
    await expectTestId(page, 'plugin-dialog', 'plugin dialog (home-menu)');
    const f = await pluginFrame(EVERYWHERE);
    // A home-menu plugin opens in the user's own base, without a table or selection.
    expect(await f.evaluate('TableSDK.ui.getContext()')).toMatchObject({ pluginId: EVERYWHERE, baseId, tableId: null, extensionPoint: 'home-menu', selection: { recordIds: [], total: 0 } });
    // Its data calls reach the server without a table (config.get ran, then the app mounted).
    await expect.poll(() => page.frameLocator('[data-testid="plugin-dialog"] [data-testid="plugin-frame"]').locator('h1').textContent()).toBe('0 ticked record(s)');
    await page.locator('[data-testid="plugin-dialog"] [data-testid="plugin-close"]').click();

    await page.goto(`${e2e.url}/bases/${baseId}`);
    await expectTestId(page, 'base-page', 'base page');
    await page.locator(`[data-testid="plugin-entry"][data-plugin-id="${EVERYWHERE}"][data-point="base-menu"]`).waitFor();
    const widget = page.locator(`[data-testid="plugin-entry"][data-plugin-id="${EVERYWHERE}"][data-point="dashboard-widget"]`);
    await widget.locator('[data-testid="plugin-open"]').click();
    const inline = page.frameLocator(`[data-testid="plugin-entry"][data-point="dashboard-widget"] [data-testid="plugin-frame"]`);
    await expect.poll(() => inline.locator('h1').textContent(), { timeout: 15_000 }).toBe('0 ticked record(s)');
    await screenshot(page, 'base-dashboard-widget');
    // The plugins that are not installed in this base (none here) and script plugins never show.
    expect(await page.locator('[data-testid="plugin-entry"][data-point="base-menu"]').count()).toBe(1);
  });
});
