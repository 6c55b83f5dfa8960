// Browser end-to-end tests of the live grid (contract section 14): two users in two browsers on one table; edits, creates,
// deletes and formula values made elsewhere appear without a reload, and a cell being edited keeps its draft.
import net from 'node:net';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_FLAGS, defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';
import { client, login, type Client } from '../server-process.js';

/** A TCP relay to the server that can drop every connection and refuse new ones: a network outage for browser B alone. */
async function startRelay(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let online = true;
  const server = net.createServer((down) => {
    if (!online) return void down.destroy();
    const up = net.connect(targetPort, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        down.destroy();
        up.destroy();
      });
    }
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    drop() {
      online = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      online = true;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

describeE2E('the live grid in two real browsers', () => {
  let e2e: E2E;
  let a: Page;
  let b: Page;
  let browserB: Browser;
  let contextB: BrowserContext;
  let bob: Client;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let baseId: string;
  let tableId: string;
  const ids: Record<string, string> = {};
  /** B's subscription requests, and which of them the page has hung up. */
  const streamsB: Request[] = [];
  const closedB = new Set<Request>();

  const cell = (page: Page, recordId: string, field: string) => page.locator(`[data-testid="grid-row"][data-record-id="${recordId}"] [data-testid="cell"][data-field="${field}"]`);
  const row = (page: Page, recordId: string) => page.locator(`[data-testid="grid-row"][data-record-id="${recordId}"]`);
  const record = async (id: string) => (await e2e.admin.data('GET', `/api/v1/tables/${tableId}/records/${id}`, undefined, 200)).fields;
  /** Counts full page loads, so "without a reload" is checked, not assumed. */
  const loads = new Map<Page, number>();

  async function openTable(page: Page, origin: string) {
    await page.goto(`${origin}/bases/${baseId}/tables/${tableId}`);
    await expectTestId(page, 'table-page', 'table page');
    await cell(page, ids.design, 'Task').waitFor();
    await page.locator('[data-testid="live-status"][data-status="live"]').waitFor();
  }
  async function editCell(page: Page, recordId: string, field: string, value: string) {
    await cell(page, recordId, field).dblclick();
    const input = cell(page, recordId, field).locator('[data-testid="editor-input"]');
    await input.fill(value);
    await input.press('Enter');
  }

  beforeAll(async () => {
    e2e = await startE2E();
    a = e2e.page;
    baseId = await defaultBase(e2e);
    await e2e.admin.data('POST', '/api/v1/users', { email: 'bob@test.local', name: 'Bob', password: 'bob-password-1' }, 201);
    const users = await e2e.admin.data('GET', '/api/v1/users', undefined, 200);
    const bobId = (Array.isArray(users) ? users : users.items).find((u: { email: string }) => u.email === 'bob@test.local').id;
    await e2e.admin.data('PUT', `/api/v1/bases/${baseId}/members/${bobId}`, { role: 'editor' }, [200, 201]);
    bob = client(e2e.url, await login(e2e.url, 'bob@test.local', 'bob-password-1'));

    const table = await e2e.admin.data('POST', '/api/v1/tables', {
      base_id: baseId, name: 'Timesheet',
      fields: [{ name: 'Task', type: 'text' }, { name: 'Hours', type: 'number' }, { name: 'Rate', type: 'number' }],
    }, 201);
    tableId = table.id;
    await e2e.admin.data('POST', `/api/v1/tables/${tableId}/fields`, { name: 'Cost', type: 'formula', config: { expression: '{Hours} * {Rate}' } }, 201);
    for (const [task, hours, rate] of [['design', 2, 50], ['build', 10, 40], ['test', 4, 30]] as const) {
      ids[task] = (await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: task, Hours: hours, Rate: rate } }, [200, 201])).id;
    }

    // Browser B: another Chromium with its own profile, signed in as Bob, reaching the server through a relay.
    relay = await startRelay(e2e.server.port);
    const { chromium } = await import('playwright-core');
    browserB = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    contextB = await browserB.newContext({ viewport: { width: 1360, height: 820 } });
    contextB.setDefaultTimeout(10_000);
    b = await contextB.newPage();
    b.on('pageerror', (err) => e2e.consoleErrors.push(`B pageerror: ${err.message}`));
    b.on('request', (r) => {
      if (r.url().endsWith('/graphql') && r.headers().accept === 'text/event-stream') streamsB.push(r);
    });
    b.on('requestfailed', (r) => closedB.add(r));
    b.on('requestfinished', (r) => closedB.add(r));
    for (const p of [a, b]) p.on('load', () => loads.set(p, (loads.get(p) ?? 0) + 1));
    await uiLogin(a, e2e.url);
    await uiLogin(b, relay.url, 'bob@test.local', 'bob-password-1');
    await openTable(a, e2e.url);
    await openTable(b, relay.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await contextB?.close().catch(() => {});
    await browserB?.close().catch(() => {});
    await relay?.close();
    await e2e?.close();
  });

  it('an inline edit in browser A appears in browser B without a reload, its formula value with it', async () => {
    const before = loads.get(b) ?? 0;
    await editCell(a, ids.design, 'Task', 'design review');
    await expect.poll(() => cell(b, ids.design, 'Task').textContent()).toBe('design review');
    expect((await record(ids.design)).Task).toBe('design review');

    // A number edit in A: B sees the number and the formula recomputed from it.
    await editCell(a, ids.build, 'Hours', '12');
    await expect.poll(() => cell(b, ids.build, 'Hours').textContent()).toBe('12');
    await expect.poll(() => cell(b, ids.build, 'Cost').textContent()).toBe('480');
    expect(loads.get(b) ?? 0).toBe(before);
    await screenshot(b, 'live-grid-edit-from-another-user');
  });

  it('a record created through the API appears in both grids, and a deleted one disappears', async () => {
    const before = loads.get(b) ?? 0;
    const created = await bob.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: 'deploy', Hours: 1, Rate: 100 } }, [200, 201]);
    ids.deploy = created.id;
    for (const p of [a, b]) {
      await row(p, created.id).waitFor();
      await expect.poll(() => cell(p, created.id, 'Task').textContent()).toBe('deploy');
      await expect.poll(() => cell(p, created.id, 'Cost').textContent()).toBe('100');
      // Appended after the others, in creation order, numbered on.
      expect(await p.locator('[data-testid="grid-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-record-id')))).toEqual([ids.design, ids.build, ids.test, created.id]);
      expect(await row(p, created.id).locator('[data-testid="row-number"]').textContent()).toBe('4');
    }

    await e2e.admin.data('DELETE', `/api/v1/tables/${tableId}/records/${ids.test}`, undefined, 200);
    for (const p of [a, b]) {
      await expect.poll(() => row(p, ids.test).count()).toBe(0);
      expect(await row(p, created.id).locator('[data-testid="row-number"]').textContent()).toBe('3');
    }
    expect(loads.get(b) ?? 0).toBe(before);
  });

  it('a formula value changed by a write elsewhere updates in place', async () => {
    await bob.data('PUT', `/api/v1/tables/${tableId}/records/${ids.deploy}`, { fields: { Rate: 150 } }, 200);
    for (const p of [a, b]) {
      await expect.poll(() => cell(p, ids.deploy, 'Rate').textContent()).toBe('150');
      await expect.poll(() => cell(p, ids.deploy, 'Cost').textContent()).toBe('150');
    }
    // A field changed elsewhere: the columns follow (a new formula column with its values).
    await e2e.admin.data('POST', `/api/v1/tables/${tableId}/fields`, { name: 'Double', type: 'formula', config: { expression: '{Cost} * 2' } }, 201);
    for (const p of [a, b]) {
      await p.locator('[data-testid="column-header"][data-field="Double"]').waitFor();
      await expect.poll(() => cell(p, ids.deploy, 'Double').textContent()).toBe('300');
    }
  });

  it('a cell being edited in browser B keeps its draft while A edits another field of the record; B\'s write then wins', async () => {
    // B opens the editor on Task and types, without committing.
    await cell(b, ids.design, 'Task').dblclick();
    const draft = cell(b, ids.design, 'Task').locator('[data-testid="editor-input"]');
    await draft.fill('B draft');
    // A edits Hours of the same record, and Task too (the very cell B is editing).
    await editCell(a, ids.design, 'Hours', '5');
    await expect.poll(async () => (await record(ids.design)).Hours).toBe(5);
    await expect.poll(() => cell(b, ids.design, 'Hours').textContent()).toBe('5');
    await expect.poll(() => cell(b, ids.design, 'Cost').textContent()).toBe('250');
    await editCell(a, ids.design, 'Task', 'A wrote this');
    await expect.poll(async () => (await record(ids.design)).Task).toBe('A wrote this');
    await a.waitForTimeout(500);
    // B's editor is still open with B's text, focused.
    expect(await draft.count()).toBe(1);
    expect(await draft.inputValue()).toBe('B draft');
    expect(await draft.evaluate((el) => el === document.activeElement)).toBe(true);
    await screenshot(b, 'live-grid-draft-kept');

    await draft.press('Enter');
    await expect.poll(async () => (await record(ids.design)).Task).toBe('B draft');
    expect((await record(ids.design)).Hours).toBe(5);
    await expect.poll(() => cell(a, ids.design, 'Task').textContent()).toBe('B draft');
    expect(await cell(b, ids.design, 'Task').textContent()).toBe('B draft');
    expect(await cell(b, ids.design, 'Hours').textContent()).toBe('5');
  });

  it('a dropped connection reconnects and resumes after the last event: changes made meanwhile appear, once', async () => {
    const before = streamsB.length;
    relay.drop();
    await b.locator('[data-testid="live-status"][data-status="retrying"]').waitFor({ timeout: 15_000 });
    await screenshot(b, 'live-grid-reconnecting');
    await bob.data('PUT', `/api/v1/tables/${tableId}/records/${ids.build}`, { fields: { Task: 'built offline' } }, 200);
    const made = await bob.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: 'while away', Hours: 2, Rate: 10 } }, [200, 201]);
    relay.restore();
    await b.locator('[data-testid="live-status"][data-status="live"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => cell(b, ids.build, 'Task').textContent()).toBe('built offline');
    await expect.poll(() => row(b, made.id).count()).toBe(1);
    // The new connection asked for the events after the last one it had seen.
    const resumed = streamsB.slice(before).map((r) => r.postDataJSON().variables.after);
    expect(resumed.at(-1)).toMatch(/^\d+$/);
    await b.waitForTimeout(300);
    expect(await row(b, made.id).count()).toBe(1);
    expect(await b.locator('[data-testid="grid-row"]').count()).toBe(4);
  });

  it('a sorted grid puts a record created elsewhere in its place; leaving the page ends the subscription', async () => {
    await b.locator('[data-testid="column-header"][data-field="Hours"] [data-testid="field-menu"]').click();
    await b.locator('[data-testid="field-menu-sort-desc"]').click();
    await expect.poll(() => b.locator('[data-testid="grid-row"]').first().getAttribute('data-record-id')).toBe(ids.build);
    const big = await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records`, { fields: { Task: 'migrate', Hours: 40, Rate: 10 } }, [200, 201]);
    await expect.poll(() => b.locator('[data-testid="grid-row"]').first().getAttribute('data-record-id')).toBe(big.id);
    // In A (no sort) it comes last.
    await expect.poll(() => a.locator('[data-testid="grid-row"]').last().getAttribute('data-record-id')).toBe(big.id);

    // One subscription for the whole session on the table, still open; leaving the table (within the app, no reload) hangs it up.
    const open = streamsB.filter((r) => !closedB.has(r));
    expect(open.length).toBe(1);
    expect(open[0].postDataJSON().query).toMatch(/tableEvents/);
    const loadsBefore = loads.get(b) ?? 0;
    await b.locator('[data-testid="base-link"]').click();
    await b.waitForURL((u) => !u.pathname.includes('/tables/'));
    expect(loads.get(b) ?? 0).toBe(loadsBefore);
    await expect.poll(() => closedB.has(open[0])).toBe(true);
    expect(await b.locator('[data-testid="live-status"]').count()).toBe(0);
  });
});
