// Browser end-to-end tests of the web UI kit's keyboard behaviour: dialogs keep focus inside (Tab and Shift+Tab cycle,
// focus moves in on opening and back to the opener on closing, Escape closes), and menus have their roles and arrow keys.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

/** What has focus: its test id, tag, role and text, and whether it is inside the element with test id `inside`. */
async function focused(page: Page, inside?: string) {
  return page.evaluate((testid) => {
    const el = document.activeElement as HTMLElement | null;
    const box = testid ? document.querySelector(`[data-testid="${testid}"]`) : null;
    return {
      testid: el?.getAttribute('data-testid') ?? null,
      tag: el?.tagName ?? null,
      role: el?.getAttribute('role') ?? null,
      text: (el?.textContent ?? '').trim(),
      inside: !!(box && el && box.contains(el)),
      id: el ? `${el.tagName}#${el.getAttribute('data-testid') ?? ''}#${(el.textContent ?? '').trim().slice(0, 20)}#${el.getAttribute('aria-label') ?? ''}` : '',
    };
  }, inside);
}

/** Presses Tab (or Shift+Tab) `times` times; after each press, focus must still be inside the dialog. Returns what had focus. */
async function tabAround(page: Page, dialog: string, times: number, shift = false): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < times; i++) {
    await page.keyboard.press(shift ? 'Shift+Tab' : 'Tab');
    const f = await focused(page, dialog);
    expect(f.inside, `after ${i + 1} ${shift ? 'Shift+Tab' : 'Tab'} presses focus left ${dialog} for ${f.id}`).toBe(true);
    seen.push(f.id);
  }
  return seen;
}

/** The dialog's ARIA: role, aria-modal and a label that names it. */
async function dialogAria(page: Page, testid: string) {
  return page.locator(`[data-testid="${testid}"]`).evaluate((el) => {
    const labelledby = el.getAttribute('aria-labelledby');
    return {
      role: el.getAttribute('role'),
      modal: el.getAttribute('aria-modal'),
      label: labelledby ? document.getElementById(labelledby)?.textContent?.trim() ?? null : null,
    };
  });
}

describeE2E('UI kit keyboard behaviour in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    const table = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Keys', fields: [{ name: 'Title', type: 'text' }, { name: 'Count', type: 'number' }],
    }, 201);
    tableId = table.id;
    await uiLogin(page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('keeps focus inside a dialog, closes it on Escape and gives focus back to the opener', async () => {
    await page.goto(`${e2e.url}/admin/users`);
    const opener = await expectTestId(page, 'new-user', 'admin users page');
    await opener.focus();
    await page.keyboard.press('Enter');
    await expectTestId(page, 'user-dialog', 'new user dialog');

    expect(await dialogAria(page, 'user-dialog')).toEqual({ role: 'dialog', modal: 'true', label: 'New user' });
    // Focus moved into the dialog, on its first field.
    await expect.poll(async () => (await focused(page, 'user-dialog')).testid).toBe('user-email-input');

    // Tab through more stops than the dialog has: focus cycles inside it.
    const forward = await tabAround(page, 'user-dialog', 14);
    // Email, name, password, administrator, Cancel, Create user, Close: at least five stops, and the sequence wrapped around.
    expect(new Set(forward).size).toBeGreaterThanOrEqual(5);
    expect(forward.length).toBeGreaterThan(new Set(forward).size);
    const backward = await tabAround(page, 'user-dialog', 14, true);
    expect(new Set(backward).size).toBe(new Set(forward).size);

    // Escape closes it; focus is back on the button that opened it.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="user-dialog"]').count()).toBe(0);
    expect((await focused(page)).testid).toBe('new-user');
  });

  it('opens the base menu from the keyboard: roles, arrow keys, Escape back to the button', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}`);
    const button = await expectTestId(page, 'base-menu-button', 'base page actions menu');
    expect(await button.getAttribute('aria-haspopup')).toBe('menu');
    expect(await button.getAttribute('aria-expanded')).toBe('false');

    await button.focus();
    await page.keyboard.press('Enter');
    const menu = await expectTestId(page, 'base-menu', 'base actions menu');
    expect(await menu.getAttribute('role')).toBe('menu');
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    expect(await menu.getAttribute('id')).toBe(await button.getAttribute('aria-controls'));
    const items = menu.locator('[role="menuitem"]');
    expect(await items.count()).toBe(2);
    expect(await menu.locator('button:not([role="menuitem"])').count()).toBe(0);

    // Focus is on the first item; arrows move and wrap, Home and End jump.
    await expect.poll(async () => (await focused(page)).testid).toBe('base-edit');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toMatchObject({ testid: 'base-delete', role: 'menuitem' });
    await page.keyboard.press('ArrowDown');
    expect((await focused(page)).testid).toBe('base-edit');
    await page.keyboard.press('ArrowUp');
    expect((await focused(page)).testid).toBe('base-delete');
    await page.keyboard.press('Home');
    expect((await focused(page)).testid).toBe('base-edit');
    await page.keyboard.press('End');
    expect((await focused(page)).testid).toBe('base-delete');

    // Escape closes the menu and returns focus to its button.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="base-menu"]').count()).toBe(0);
    expect((await focused(page)).testid).toBe('base-menu-button');
    expect(await button.getAttribute('aria-expanded')).toBe('false');

    // ArrowUp on the button opens the menu on its last item; Enter chooses it: the confirmation dialog keeps focus,
    // and Escape cancels it with focus back on the menu button.
    await page.keyboard.press('ArrowUp');
    await expect.poll(async () => (await focused(page)).testid).toBe('base-delete');
    await page.keyboard.press('Enter');
    await expectTestId(page, 'confirm-dialog', 'delete base confirmation');
    expect(await page.locator('[data-testid="base-menu"]').count()).toBe(0);
    const aria = await dialogAria(page, 'confirm-dialog');
    expect(aria.role === 'alertdialog' || aria.role === 'dialog').toBe(true);
    expect(aria.modal).toBe('true');
    expect(aria.label).toMatch(/Delete the base/);
    expect((await focused(page, 'confirm-dialog')).inside).toBe(true);
    const stops = await tabAround(page, 'confirm-dialog', 7);
    expect(stops.some((s) => s.includes('confirm-cancel'))).toBe(true);
    expect(stops.some((s) => s.includes('confirm-ok'))).toBe(true);
    await tabAround(page, 'confirm-dialog', 5, true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="confirm-dialog"]').count()).toBe(0);
    expect((await focused(page)).testid).toBe('base-menu-button');
    // Cancelled: the base is still there.
    await e2e.admin.data('GET', `/api/v1/bases/${baseId}`, undefined, 200);
  });

  it('gives the grid\'s column menu its roles and arrow keys, and keeps focus in the field dialog it opens', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'table-page', 'table page');
    const caret = page.locator('[data-testid="field-menu"][data-field="Count"]');
    await caret.waitFor({ state: 'attached' });
    expect(await caret.getAttribute('aria-haspopup')).toBe('menu');
    await caret.focus();
    await page.keyboard.press('ArrowDown');
    const menu = await expectTestId(page, 'field-menu-panel', 'column menu');
    expect(await menu.getAttribute('role')).toBe('menu');
    expect(await caret.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(async () => (await focused(page)).testid).toBe('field-menu-edit');
    expect((await focused(page)).role).toBe('menuitem');
    await page.keyboard.press('ArrowDown');
    expect((await focused(page)).testid).toBe('field-menu-rename');
    await page.keyboard.press('End');
    expect((await focused(page)).testid).toBe('field-menu-delete');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="field-menu-panel"]').count()).toBe(0);
    expect(await focused(page)).toMatchObject({ testid: 'field-menu' });
    expect(await caret.getAttribute('aria-expanded')).toBe('false');

    // Edit field from the menu: a dialog that keeps focus, closed with Escape back to the column's menu button.
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused(page)).testid).toBe('field-menu-edit');
    await page.keyboard.press('Enter');
    await expectTestId(page, 'field-dialog', 'edit field dialog');
    expect(await dialogAria(page, 'field-dialog')).toEqual({ role: 'dialog', modal: 'true', label: 'Edit field' });
    await expect.poll(async () => (await focused(page)).testid).toBe('field-name');
    await tabAround(page, 'field-dialog', 12);
    await tabAround(page, 'field-dialog', 12, true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('[data-testid="field-dialog"]').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-field'))).toBe('Count');
  });
});
