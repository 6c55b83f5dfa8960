// Browser end-to-end tests of computed fields in the web app (contract section 12): a formula added through the field
// dialog (the server's 400 under the expression box first), its value in the grid following an inline edit, read-only
// cells, filter operators by result type, and a rollup over a link added through the dialog and shown in the drawer.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, poll, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';


interface FieldInfo { id: string; name: string; type: string; config: Record<string, unknown> }

describeE2E('computed fields in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;
  const ids: Record<string, string> = {};

  const cell = (recordId: string, field: string) => page.locator(`[data-testid="grid-row"][data-record-id="${recordId}"] [data-testid="cell"][data-field="${field}"]`);
  const record = async (table: string, id: string) => (await e2e.admin.data('GET', `/api/v1/tables/${table}/records/${id}`, undefined, 200)).fields;
  async function fieldsOf(table: string): Promise<FieldInfo[]> {
    const d = await e2e.admin.data('GET', `/api/v1/tables/${table}/fields`, undefined, 200);
    return Array.isArray(d) ? d : d.items;
  }
  const activeTestId = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? null);

  beforeAll(async () => {
    e2e = await startE2E();
    page = e2e.page;
    baseId = await defaultBase(e2e);
    const table = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Timesheet',
      fields: [{ name: 'Task', type: 'text' }, { name: 'Hours', type: 'number' }, { name: 'Rate', type: 'number' }],
    }, 201);
    tableId = table.id;
    for (const [task, hours, rate] of [['design', 2, 50], ['build', 10, 40]] as const) {
      const r = await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: task, Hours: hours, Rate: rate } }, [200, 201]);
      ids[task] = r.id;
    }
    await uiLogin(page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
  });

  it('adds a formula through the field dialog: the server\'s error shows under the expression box, then the fixed formula saves', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'table-page', 'table page');
    await cell(ids.design, 'Hours').waitFor();

    await page.locator('[data-testid="toolbar-add-field"]').click();
    const dialog = await expectTestId(page, 'field-dialog', 'add field dialog');
    await page.locator('[data-testid="field-name"]').fill('Cost');
    await page.locator('[data-testid="field-type"]').selectOption('formula');
    const box = page.locator('[data-testid="field-formula"]');
    await box.waitFor();
    // The fields a formula can name, offered as buttons.
    expect(await page.locator('[data-testid="formula-field-ref"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-field')))).toEqual(['Task', 'Hours', 'Rate']);

    // A misspelt field: the 400's message, with its position, right under the box; the caret goes back into the box.
    await box.fill('{Hourz} * {Rate}');
    await page.locator('[data-testid="field-save"]').click();
    const error = await expectTestId(page, 'field-formula-error', 'formula error under the expression box');
    expect(await error.textContent()).toMatch(/unknown field \{Hourz\} at position 0/);
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    // Right under the box: the error follows the textarea directly.
    expect(await box.evaluate((el) => el.nextElementSibling?.getAttribute('data-testid'))).toBe('field-formula-error');
    expect(await error.locator('mark').textContent()).toBe('{Hourz}');
    await poll(activeTestId).toBe('field-formula');
    expect(await box.evaluate((el: HTMLTextAreaElement) => el.selectionStart)).toBe(0);
    expect(await page.locator('[data-testid="field-dialog"]').count()).toBe(1);
    await screenshot(page, 'computed-formula-editor');

    // The fix, partly through the field buttons: each inserts {Name} at the caret and leaves the focus in the box.
    await box.fill('');
    await poll(() => page.locator('[data-testid="field-formula-error"]').count()).toBe(0);
    await page.locator('[data-testid="formula-field-ref"][data-field="Hours"]').click();
    await poll(activeTestId).toBe('field-formula');
    await page.keyboard.type(' * ');
    await page.locator('[data-testid="formula-field-ref"][data-field="Rate"]').click();
    expect(await box.inputValue()).toBe('{Hours} * {Rate}');
    // Focus stays trapped in the dialog: Tab from the last control wraps inside it.
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="field-dialog"]'))).toBe(true);
    }
    await dialog.locator('[data-testid="field-save"]').click();
    await page.locator('[data-testid="column-header"][data-field="Cost"]').waitFor();
    await poll(() => page.locator('[data-testid="field-dialog"]').count()).toBe(0);

    const cost = (await fieldsOf(tableId)).find((f) => f.name === 'Cost')!;
    expect(cost.type).toBe('formula');
    expect(cost.config).toMatchObject({ expression: '{Hours} * {Rate}', result_type: 'number' });

    // The computed values, formatted as numbers (right-aligned like a number field) and read-only.
    await poll(() => cell(ids.design, 'Cost').textContent()).toBe('100');
    await poll(() => cell(ids.build, 'Cost').textContent()).toBe('400');
    const costCell = cell(ids.design, 'Cost');
    expect(await costCell.getAttribute('aria-readonly')).toBe('true');
    expect(await costCell.locator('.cv').evaluate((el) => getComputedStyle(el).justifyContent)).toBe('flex-end');
    expect(await cell(ids.design, 'Hours').locator('.cv').evaluate((el) => getComputedStyle(el).justifyContent)).toBe('flex-end');
  });

  it('recomputes the formula cell after an inline edit of Hours, and never opens an editor on the formula cell', async () => {
    await cell(ids.design, 'Hours').dblclick();
    const input = cell(ids.design, 'Hours').locator('[data-testid="editor-input"]');
    await input.fill('3');
    await input.press('Enter');
    await poll(async () => (await record(tableId, ids.design)).Hours).toBe(3);
    await poll(() => cell(ids.design, 'Cost').textContent()).toBe('150');
    expect((await record(tableId, ids.design)).Cost).toBe(150);

    // Double-click, Enter, typing and Delete on the formula cell: no editor, no write.
    const costCell = cell(ids.design, 'Cost');
    await costCell.dblclick();
    expect(await costCell.locator('[data-testid="cell-editor"]').count()).toBe(0);
    await page.keyboard.press('Enter');
    await page.keyboard.type('9');
    expect(await page.locator('[data-testid="cell-editor"]').count()).toBe(0);
    await page.keyboard.press('Delete');
    await page.keyboard.press('Backspace');
    expect(await page.locator('[data-testid="cell-editor"]').count()).toBe(0);
    expect(await costCell.getAttribute('class')).toMatch(/\bactive\b/);
    expect(await costCell.textContent()).toBe('150');
    expect((await record(tableId, ids.design)).Cost).toBe(150);
    // The server refuses a write too (what the read-only cell spares the user).
    const refused = await e2e.admin.call('PUT', `/api/v1/tables/${tableId}/records/${ids.design}`, { fields: { Cost: 1 } });
    expect(refused.status).toBe(400);

    // Other result types in the grid: text, a read-only check for a boolean, a date.
    for (const [name, expression] of [['Size', 'IF({Hours} > 8, "long", "short")'], ['Overtime', '{Hours} > 8'], ['Due', 'DATEADD("2025-03-01", {Hours}, "days")']]) {
      await e2e.admin.data('POST', `/api/v1/tables/${tableId}/fields`, { name, type: 'formula', config: { expression } }, 201);
    }
    await page.reload();
    await cell(ids.build, 'Due').waitFor();
    await poll(() => cell(ids.build, 'Size').textContent()).toBe('long');
    expect(await cell(ids.design, 'Size').textContent()).toBe('short');
    expect(await cell(ids.build, 'Overtime').locator('[role="checkbox"]').getAttribute('aria-checked')).toBe('true');
    expect(await cell(ids.design, 'Overtime').locator('[role="checkbox"]').getAttribute('aria-checked')).toBe('false');
    // A click on the read-only check changes nothing.
    await cell(ids.design, 'Overtime').locator('[role="checkbox"]').click();
    await cell(ids.design, 'Overtime').locator('[role="checkbox"]').click();
    expect((await record(tableId, ids.design)).Overtime).toBe(false);
    expect(await cell(ids.build, 'Due').textContent()).toBe(await page.evaluate(() => new Date(Date.UTC(2025, 2, 11)).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' })));
    await screenshot(page, 'computed-grid');
  });

  it('offers the operators of the result type when filtering by a formula', async () => {
    await page.locator('[data-testid="filter-button"]').click();
    await expectTestId(page, 'filter-panel', 'filter builder');
    await page.locator('[data-testid="filter-add"]').click();
    const cond = page.locator('[data-testid="filter-condition"]').first();
    const fields = await fieldsOf(tableId);
    const byName = (n: string) => fields.find((f) => f.name === n)!.id;
    const ops = () => cond.locator('[data-testid="filter-operator"] option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));

    await cond.locator('[data-testid="filter-field"]').selectOption(byName('Cost'));
    expect(await ops()).toEqual(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'is_empty', 'is_not_empty']);
    await cond.locator('[data-testid="filter-operator"]').selectOption('gt');
    await cond.locator('[data-testid="filter-value"]').fill('200');
    await poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(1);
    expect(await page.locator('[data-testid="grid-row"]').first().getAttribute('data-record-id')).toBe(ids.build);

    await cond.locator('[data-testid="filter-field"]').selectOption(byName('Size'));
    expect(await ops()).toContain('contains');
    await cond.locator('[data-testid="filter-field"]').selectOption(byName('Overtime'));
    expect(await ops()).toEqual(['eq', 'neq', 'is_empty', 'is_not_empty']);
    await page.locator('[data-testid="filter-clear"]').click();
    await poll(() => page.locator('[data-testid="grid-row"]').count()).toBe(2);
    await page.locator('[data-testid="filter-button"]').click();
  });

  it('adds a rollup over a link through the field dialog and shows it read-only in the grid and the drawer', async () => {
    const projects = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Projects',
      fields: [{ name: 'Name', type: 'text' }, { name: 'Tasks', type: 'link', config: { table_id: tableId } }],
    }, 201);
    const project = await e2e.admin.data('POST', `/api/v1/tables/${projects.id}/records`, { fields: { Name: 'Launch', Tasks: [ids.design, ids.build] } }, [200, 201]);
    const linkId = (await fieldsOf(projects.id)).find((f) => f.name === 'Tasks')!.id;
    const costId = (await fieldsOf(tableId)).find((f) => f.name === 'Cost')!.id;

    await page.goto(`${e2e.url}/bases/${baseId}/tables/${projects.id}`);
    await expectTestId(page, 'table-page', 'projects table page');
    await page.locator(`[data-testid="grid-row"][data-record-id="${project.id}"]`).waitFor();

    await page.locator('[data-testid="toolbar-add-field"]').click();
    await expectTestId(page, 'field-dialog', 'add field dialog');
    await page.locator('[data-testid="field-name"]').fill('Total cost');
    await page.locator('[data-testid="field-type"]').selectOption('rollup');
    // Only link fields of this table to follow; the linked table's fields to read, loaded from the server.
    const linkSelect = page.locator('[data-testid="field-link-field"]');
    expect(await linkSelect.locator('option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value))).toEqual([linkId]);
    const target = page.locator('[data-testid="field-lookup-field"]');
    await poll(() => target.locator('option').count()).toBeGreaterThan(3);
    expect(await target.locator('option').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('Hours'), expect.stringContaining('Cost')]));
    await target.selectOption(costId);
    await page.locator('[data-testid="field-rollup-function"]').selectOption('sum');
    await page.locator('[data-testid="field-save"]').click();
    await page.locator('[data-testid="column-header"][data-field="Total cost"]').waitFor();

    const rollup = (await fieldsOf(projects.id)).find((f) => f.name === 'Total cost')!;
    expect(rollup).toMatchObject({ type: 'rollup', config: { link_field: linkId, field: costId, function: 'sum', result_type: 'number' } });
    const total = page.locator(`[data-testid="grid-row"][data-record-id="${project.id}"] [data-testid="cell"][data-field="Total cost"]`);
    await poll(() => total.textContent()).toBe('550');
    expect(await total.getAttribute('aria-readonly')).toBe('true');

    // A count through the dialog as well: one select, the link field.
    await page.locator('[data-testid="toolbar-add-field"]').click();
    await expectTestId(page, 'field-dialog', 'add field dialog');
    await page.locator('[data-testid="field-name"]').fill('Task count');
    await page.locator('[data-testid="field-type"]').selectOption('count');
    expect(await page.locator('[data-testid="field-lookup-field"]').count()).toBe(0);
    await page.locator('[data-testid="field-save"]').click();
    const count = page.locator(`[data-testid="grid-row"][data-record-id="${project.id}"] [data-testid="cell"][data-field="Task count"]`);
    await poll(() => count.textContent()).toBe('2');

    // A lookup through the dialog: the linked records' values as chips, in link order.
    await page.locator('[data-testid="toolbar-add-field"]').click();
    await expectTestId(page, 'field-dialog', 'add field dialog');
    await page.locator('[data-testid="field-name"]').fill('Task names');
    await page.locator('[data-testid="field-type"]').selectOption('lookup');
    await poll(() => page.locator('[data-testid="field-lookup-field"] option').count()).toBeGreaterThan(3);
    await page.locator('[data-testid="field-lookup-field"]').selectOption((await fieldsOf(tableId)).find((f) => f.name === 'Task')!.id);
    await page.locator('[data-testid="field-save"]').click();
    const names = page.locator(`[data-testid="grid-row"][data-record-id="${project.id}"] [data-testid="cell"][data-field="Task names"] .chip`);
    await poll(() => names.allTextContents()).toEqual(['design', 'build']);

    // The drawer: computed values in their result type's look, in read-only boxes rather than editors.
    await page.locator(`[data-testid="grid-row"][data-record-id="${project.id}"] [data-testid="open-record"]`).click();
    const drawer = await expectTestId(page, 'record-drawer', 'record drawer');
    const drawerTotal = drawer.locator('[data-testid="drawer-field"][data-field="Total cost"]');
    await poll(() => drawerTotal.locator('[data-testid="drawer-readonly"]').textContent()).toBe('550');
    expect(await drawerTotal.locator('input, textarea, select').count()).toBe(0);
    await page.keyboard.press('Escape');
    await poll(() => page.locator('[data-testid="record-drawer"]').count()).toBe(0);
  });
});
