// Browser end-to-end test of the trash (contract section 16): a record deleted in the grid's drawer is restored on the
// base's trash page, then its History section lists its changes.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

describeE2E('the trash in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;
  let recordId: string;

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    tableId = (await e2e.admin.data('POST', '/api/v1/tables', { base_id: baseId, name: 'Chores', fields: [{ name: 'Task', type: 'text' }, { name: 'Hours', type: 'number' }] }, 201)).id;
    recordId = (await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: 'dishes', Hours: 1 } }, [200, 201])).id;
    await e2e.admin.data('PUT', `/api/v1/tables/${tableId}/records/${recordId}`, { fields: { Hours: 2 } }, 200);
    await uiLogin(page, e2e.url);
  }, 180_000);
  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('deletes a record in the grid, restores it from the trash page and shows its history', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    const row = page.locator(`[data-testid="grid-row"][data-record-id="${recordId}"]`);
    await row.waitFor();
    await row.locator('[data-testid="open-record"]').click();
    await expectTestId(page, 'record-drawer', 'record drawer');
    await page.locator('[data-testid="record-delete"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await expect.poll(() => row.count()).toBe(0);

    await page.goto(`${e2e.url}/bases/${baseId}`);
    await page.locator('[data-testid="base-trash-link"]').click();
    await expectTestId(page, 'trash-page', 'trash page');
    const item = page.locator('[data-testid="trash-item"]', { hasText: 'dishes' });
    await item.waitFor();
    await screenshot(page, 'trash-page');
    await item.locator('[data-testid="trash-restore"]').click();
    await expect.poll(() => item.count()).toBe(0);
    expect((await e2e.admin.data('GET', `/api/v1/tables/${tableId}/records/${recordId}`, undefined, 200)).fields).toEqual({ Task: 'dishes', Hours: 2 });

    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await row.waitFor();
    await row.locator('[data-testid="open-record"]').click();
    await page.locator('[data-testid="record-drawer"] [data-testid="tab-history"]').click();
    const entries = page.locator('[data-testid="history-entry"]');
    await expect.poll(() => entries.count()).toBeGreaterThanOrEqual(2);
    expect(await entries.first().textContent()).toContain('Hours');
    await screenshot(page, 'record-history');
  });
});
