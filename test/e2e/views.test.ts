// Browser end-to-end tests of views (contract section 13): a kanban view built in the UI with a card dragged to another
// column; a form built in the UI, shared, opened in a fresh browser context with no login, submitted, and its record
// seen in the grid; a screenshot of each view type in docs/screenshots/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_FLAGS, defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

describeE2E('views in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;
  let stranger: Browser | undefined;
  const ids: Record<string, string> = {};

  async function addView(type: string, name: string, configField?: string) {
    await page.locator(`[data-testid="add-view-${type}"]`).click();
    const dialog = await expectTestId(page, 'view-dialog', 'add view dialog');
    await dialog.locator('[data-testid="view-name"]').fill(name);
    if (configField) await dialog.locator('[data-testid="view-config-field"]').selectOption({ label: configField });
    await dialog.locator('[data-testid="view-create"]').click();
    await page.locator(`[data-testid="view-tab"][aria-pressed="true"]`, { hasText: name }).waitFor();
  }

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    const table = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Roadmap',
      fields: [
        { name: 'Task', type: 'text' }, { name: 'Stage', type: 'single_select', options: ['Idea', 'Doing', 'Done'] },
        { name: 'Due', type: 'date' }, { name: 'Estimate', type: 'number' },
      ],
    }, 201);
    tableId = table.id;
    const rows = [['Research', 'Idea', '2026-11-03', 3], ['Prototype', 'Doing', '2026-11-10', 5], ['Launch', 'Done', '2026-11-20', 8], ['Docs', null, '2026-11-12', 2]] as const;
    for (const [task, stage, due, est] of rows) {
      ids[task] = (await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: task, Stage: stage, Due: due, Estimate: est } }, 201)).id;
    }
    await uiLogin(page, e2e.url);
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'view-bar', 'view tabs');
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await stranger?.close().catch(() => {});
    await e2e?.close();
  });

  it('every table has its "Grid view" tab', async () => {
    await expect.poll(() => page.locator('[data-testid="view-tab"]').allTextContents()).toEqual(['▦Grid view']);
    await page.locator('[data-testid="grid-row"]').first().waitFor();
    await screenshot(page, 'view-grid');
  });

  it('the grid keeps its hidden fields in the view, across a reload', async () => {
    await page.locator('[data-testid="view-fields"]').click();
    await page.locator('[data-testid="show-field-Estimate"]').uncheck();
    await expect.poll(() => page.locator('[data-testid="cell"][data-field="Estimate"]').count()).toBe(0);
    const [grid] = await e2e.admin.data('GET', `/api/v1/tables/${tableId}/views`, undefined, 200);
    expect(grid.hidden_fields).toHaveLength(1);
    await page.reload();
    await page.locator('[data-testid="grid-row"]').first().waitFor();
    expect(await page.locator('[data-testid="cell"][data-field="Estimate"]').count()).toBe(0);
    await page.locator('[data-testid="view-fields"]').click();
    await page.locator('[data-testid="show-field-Estimate"]').check();
    await expect.poll(() => page.locator('[data-testid="cell"][data-field="Estimate"]').count()).toBe(4);
    await page.locator('[data-testid="view-fields"]').click();
  });

  it('the grid opens with its view\'s filter and sort, and a sort made in the page is saved into the view', async () => {
    const [grid] = await e2e.admin.data('GET', `/api/v1/tables/${tableId}/views`, undefined, 200);
    await e2e.admin.data('PUT', `/api/v1/views/${grid.id}`, { filter: { field: 'Estimate', operator: 'gte', value: 3 }, sort: [{ field: 'Estimate', direction: 'desc' }] }, 200);
    await page.reload();
    await expect.poll(() => page.locator('[data-testid="cell"][data-field="Task"]').allTextContents()).toEqual(['Launch', 'Prototype', 'Research']);
    await e2e.admin.data('PUT', `/api/v1/views/${grid.id}`, { filter: null, sort: null }, 200);
    await page.reload();
    await expect.poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(4);
    await page.locator('[data-testid="column-header"][data-field="Task"] [data-testid="field-menu"]').click();
    await page.locator('[data-testid="field-menu-sort-asc"]').click();
    const taskId = grid.field_order[0] ?? (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/fields`, undefined, 200)).items[0].id;
    await expect.poll(async () => (await e2e.admin.data('GET', `/api/v1/views/${grid.id}`, undefined, 200)).sort, { timeout: 5000 }).toEqual([{ field: taskId, direction: 'asc' }]);
    await e2e.admin.data('PUT', `/api/v1/views/${grid.id}`, { sort: null }, 200);
    await page.reload();
    await page.locator('[data-testid="grid-row"]').first().waitFor();
  });

  it('builds a kanban view and dragging a card to another column changes its stage', async () => {
    await addView('kanban', 'Board', 'Stage');
    await expectTestId(page, 'kanban', 'kanban board');
    const column = (key: string) => page.locator(`[data-testid="kanban-column"][data-column="${key}"]`);
    await expect.poll(() => page.locator('[data-testid="kanban-column"]').count()).toBe(4);
    const card = page.locator(`[data-testid="kanban-card"][data-record-id="${ids.Research}"]`);
    await expect.poll(() => column('Idea').locator('[data-testid="kanban-card"]').count()).toBe(1);
    await expect.poll(() => column('').locator('[data-testid="kanban-card"]').count()).toBe(1);
    await screenshot(page, 'view-kanban');
    await card.dragTo(column('Done'));
    await expect.poll(async () => (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/records/${ids.Research}`, undefined, 200)).fields.Stage).toBe('Done');
    await expect.poll(() => column('Done').locator('[data-testid="kanban-card"]').count()).toBe(2);
  });

  it('shows a gallery and a month calendar', async () => {
    await addView('gallery', 'Cards');
    await expect.poll(() => page.locator('[data-testid="gallery-card"]').count()).toBe(4);
    await screenshot(page, 'view-gallery');
    await addView('calendar', 'Schedule', 'Due');
    await expect.poll(() => page.locator('[data-testid="calendar-item"]').count()).toBe(4);
    expect(await page.locator('[data-testid="calendar-month"]').textContent()).toBe('November 2026');
    await screenshot(page, 'view-calendar');
    // Its settings: renamed and locked (the administrator is a base admin).
    await page.locator('[data-testid="view-settings-open"]').click();
    const settings = await expectTestId(page, 'view-settings', 'view settings');
    await settings.locator('[data-testid="view-rename"]').fill('Due dates');
    await settings.getByRole('button', { name: 'Rename' }).click();
    await settings.locator('[data-testid="view-locked"]').check();
    await expect.poll(async () => (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/views`, undefined, 200)).find((v: any) => v.type === 'calendar'))
      .toMatchObject({ name: 'Due dates', locked: true });
    await page.keyboard.press('Escape');
    await page.locator('[data-testid="view-tab"]', { hasText: 'Due dateslocked' }).waitFor();
  });

  it('builds a form, shares it, and a stranger with no login submits it; the record is in the grid', async () => {
    await addView('form', 'Suggestions');
    await expectTestId(page, 'form-builder', 'form builder');
    for (const f of ['Task', 'Stage', 'Estimate']) {
      const box = page.locator(`[data-testid="form-field-${f}"]`);
      if (!(await box.isChecked())) await box.check();
    }
    for (const f of ['Due']) {
      const box = page.locator(`[data-testid="form-field-${f}"]`);
      if (await box.isChecked()) await box.uncheck();
    }
    await page.locator('[data-testid="form-required-Task"]').check();
    await page.locator('[data-testid="form-title-input"]').fill('Suggest a task');
    await page.locator('[data-testid="form-message-input"]').fill('Thanks, we got your idea!');
    await page.locator('[data-testid="form-save"]').click();
    await screenshot(page, 'view-form-builder');

    await page.locator('[data-testid="share-view"]').click();
    const dialog = await expectTestId(page, 'share-dialog', 'share dialog');
    await dialog.locator('[data-testid="share-switch"]').check();
    const link = (await (await expectTestId(page, 'share-link', 'share link')).textContent())!.trim();
    expect(link).toMatch(/\/share\/shr[\w-]+$/);
    await screenshot(page, 'view-share-dialog');
    await page.keyboard.press('Escape');

    // A browser with no session at all.
    const { chromium } = await import('playwright-core');
    stranger = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    const context = await stranger.newContext({ viewport: { width: 1000, height: 760 } });
    const pub = await context.newPage();
    await pub.goto(link.trim());
    await expectTestId(pub, 'form-fill', 'public form');
    expect(await pub.locator('[data-testid="form-title"]').textContent()).toBe('Suggest a task');
    expect(await pub.locator('[data-testid="form-input-Due"]').count()).toBe(0);
    await pub.locator('[data-testid="form-input-Task"]').fill('Dark mode');
    await pub.locator('[data-testid="form-input-Stage"]').selectOption('Idea');
    await pub.locator('[data-testid="form-input-Estimate"]').fill('4');
    await screenshot(pub, 'view-form-public');
    await pub.locator('[data-testid="form-submit"]').click();
    expect(await (await expectTestId(pub, 'form-submitted', 'submit message')).textContent()).toBe('Thanks, we got your idea!');

    await page.locator('[data-testid="view-tab"]', { hasText: 'Grid view' }).click();
    await expect.poll(() => page.locator('[data-testid="grid-row"]').count(), { timeout: 10_000 }).toBe(5);
    expect(await page.locator('[data-testid="cell"][data-field="Task"]').allTextContents()).toContain('Dark mode');
    await screenshot(page, 'view-grid-after-form');

    // A shared board: read-only, without login.
    const board = (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/views`, undefined, 200)).find((v: any) => v.type === 'kanban');
    const boardLink = (await e2e.admin.data('POST', `/api/v1/views/${board.id}/share`, undefined, 200)).url as string;
    const boardPage = await context.newPage();
    await boardPage.goto(boardLink.replace(/^https?:\/\/[^/]+/, e2e.url));
    await expect.poll(() => boardPage.locator('[data-testid="kanban-card"]').count()).toBe(5);
    expect(await boardPage.locator('[data-testid="kanban-card"][draggable="true"]').count()).toBe(0);
    await screenshot(boardPage, 'view-kanban-shared');

    // Sharing stopped: the link is gone.
    await page.locator('[data-testid="view-tab"]', { hasText: 'Suggestions' }).click();
    await page.locator('[data-testid="share-view"]').click();
    await (await expectTestId(page, 'share-dialog', 'share dialog')).locator('[data-testid="share-switch"]').uncheck();
    // The switch answers at once; the page is reloaded only once the server has stopped the sharing.
    const suggestionsShared = async () => (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/views`, undefined, 200)).find((v: any) => v.name === 'Suggestions').share_id;
    await expect.poll(suggestionsShared, { timeout: 10_000 }).toBeNull();
    await pub.reload();
    await pub.getByText('This link is not shared').waitFor();
  });
});
