// Browser end-to-end test of import and export in the web app (contract section 15): the import dialog's preview with
// the column mapping, the progress bar driven by the job, the skipped rows at the end, and the toolbar's CSV export.
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

describeE2E('import and export in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    tableId = (await e2e.admin.data('POST', '/api/v1/tables', { base_id: baseId, name: 'Guests', fields: [{ name: 'Name', type: 'text' }, { name: 'Age', type: 'number' }] }, 201)).id;
    await uiLogin(page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('imports a CSV through the dialog: preview and mapping, progress, the skipped rows; then exports the view as CSV', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'table-page', 'table page');
    await page.locator('[data-testid="import-open"]').click();
    await expectTestId(page, 'import-dialog', 'import dialog');
    const csv = '\ufeffName;Years;Note\nAda;36;first\nBob;old;second\nZoë;41;third\n';
    await page.locator('[data-testid="import-file"]').setInputFiles({ name: 'guests.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await expectTestId(page, 'import-preview', 'the preview');
    expect(await page.locator('[data-testid="import-preview"] tbody tr').count()).toBe(3);
    // Name matches a field by name; Years is mapped by hand; Note stays skipped.
    expect(await page.locator('[data-testid="import-map-Name"]').inputValue()).toBe('Name');
    expect(await page.locator('[data-testid="import-map-Note"]').inputValue()).toBe('');
    await page.locator('[data-testid="import-map-Years"]').selectOption('Age');
    await screenshot(page, 'import-dialog');
    await page.locator('[data-testid="import-start"]').click();
    await page.locator('[data-testid="import-progress"][data-status="succeeded"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-testid="import-counts"]').textContent()).toContain('2 imported, 1 skipped');
    expect(await page.locator('[data-testid="import-errors"] li').allTextContents()).toEqual([expect.stringMatching(/^Row 2, column Years: field "Age": expected a number/)]);
    await screenshot(page, 'import-finished');
    await page.locator('[data-testid="import-close"]').click();
    // The grid shows the imported records without a reload.
    await page.locator('[data-testid="grid-row"]').nth(1).waitFor();
    expect(await page.locator('[data-testid="grid-row"]').count()).toBe(2);

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="export-csv"]').click()]);
    expect(download.suggestedFilename()).toBe('Guests.csv');
    expect(fs.readFileSync((await download.path())!, 'utf8')).toBe('Name,Age\r\nAda,36\r\nZoë,41\r\n');
  });
});
