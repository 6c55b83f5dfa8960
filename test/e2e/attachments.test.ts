// Browser end-to-end test of attachment cells (contract 16): upload a PNG by picking it, see its thumbnail in the grid,
// open the image preview; drop a file on another row's cell.
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

describeE2E('attachments in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    tableId = (await e2e.admin.data('POST', '/api/v1/tables', { base_id: baseId, name: 'Photos', fields: [{ name: 'Name', type: 'text' }, { name: 'Files', type: 'attachment' }] }, 201)).id;
    for (const name of ['Sunset', 'Notes']) await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Name: name } }, 201);
    await uiLogin(page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('uploads a PNG by picking it, shows its thumbnail, opens the preview, and takes a dropped file', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'table-page', 'table page');
    const png = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#e07a3f' } })
      .composite([{ input: Buffer.from('<svg width="1200" height="800"><circle cx="600" cy="400" r="250" fill="#ffd166"/></svg>') }]).png().toBuffer();
    const first = page.locator('[data-testid="grid-row"]').nth(0).locator('[data-testid="attachment-cell"]');
    await first.locator('[data-testid="attachment-input"]').setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: png });
    const thumb = first.locator('[data-testid="attachment-thumb"]');
    await thumb.waitFor({ timeout: 15_000 });
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await thumb.elementHandle(), { timeout: 10_000 });
    expect(await thumb.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(200);
    await screenshot(page, 'attachments-grid');
    await thumb.click();
    const preview = await expectTestId(page, 'attachment-preview', 'image preview');
    const large = preview.locator('img');
    await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await large.elementHandle(), { timeout: 10_000 });
    expect(await large.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(800);
    await page.waitForTimeout(400); // the dialog's fade-in
    await screenshot(page, 'attachments-preview');
    await page.keyboard.press('Escape');
    await preview.waitFor({ state: 'detached' });

    // A file dropped on the second row's cell: not an image, shown by its name.
    const second = page.locator('[data-testid="grid-row"]').nth(1).locator('[data-testid="attachment-cell"]');
    await second.evaluate((el) => {
      const dt = new DataTransfer();
      dt.items.add(new File(['meeting notes'], 'notes.txt', { type: 'text/plain' }));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await second.locator('[data-testid="attachment-item"]', { hasText: 'notes.txt' }).waitFor({ timeout: 15_000 });
    const rows = await e2e.admin.data('GET', `/api/v1/tables/${tableId}/records`);
    expect(rows.items.map((r: any) => r.fields.Files?.map((f: any) => f.name) ?? null)).toEqual([['sunset.png'], ['notes.txt']]);
  });
});
