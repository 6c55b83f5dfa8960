// Browser end-to-end tests of the webhooks page (contract section 14): create a webhook for a loopback receiver, its secret
// shown once (and it really signs), a test ping delivered with 200, redelivery, a failing receiver's deliveries and the
// service disabling it, the switch, delete.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { Webhook as Verifier } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultBase, describeE2E, expectTestId, screenshot, startE2E, uiLogin, type E2E } from '../e2e-helpers.js';

interface Received { path: string; headers: Record<string, string>; body: string }

describeE2E('the webhooks page in a real browser', () => {
  let e2e: E2E;
  let page: Page;
  let baseId: string;
  let tableId: string;
  let receiver: http.Server;
  let port = 0;
  const received: Received[] = [];
  let secret = '';
  let webhookId = '';

  const hookUrl = (name: string) => `http://127.0.0.1:${port}/hook/${name}`;
  const row = (url: string) => page.locator(`[data-testid="webhook-row"][data-url="${url}"]`);

  beforeAll(async () => {
    // The receiver: /hook/ok answers 200, /hook/down 503.
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        const status = req.url === '/hook/down' ? 503 : 200;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver is down');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    // The loopback receiver is allowed past the SSRF guard; retries come quickly so a failing delivery settles in the test.
    e2e = await startE2E({ env: { PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${port}`, WEBHOOK_RETRY_SCHEDULE_MS: '50,50' } });
    page = e2e.page;
    baseId = await defaultBase(e2e);
    tableId = (await e2e.admin.data('POST', '/api/v1/tables', { base_id: baseId, name: 'Leads', fields: [{ name: 'Name', type: 'text' }] }, 201)).id;
    await uiLogin(page, e2e.url);
  }, 180_000);

  afterAll(async () => {
    if (e2e?.consoleErrors.length) console.warn(`browser console errors:\n${e2e.consoleErrors.join('\n')}`);
    await e2e?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('is reached from the base page, creates a webhook and shows its secret once', async () => {
    await page.goto(`${e2e.url}/bases/${baseId}`);
    await (await expectTestId(page, 'base-webhooks-link', 'base page webhooks link')).click();
    await expectTestId(page, 'webhooks-page', 'webhooks page');
    await expectTestId(page, 'webhooks-empty', 'empty webhooks list');

    await page.locator('[data-testid="new-webhook"]').click();
    await expectTestId(page, 'webhook-dialog', 'new webhook dialog');
    // A private address that is not allowed: the server's refusal shows in the dialog.
    await page.locator('[data-testid="webhook-url"]').fill('http://10.0.0.1/hook');
    await page.locator('[data-testid="webhook-save"]').click();
    await expectTestId(page, 'webhook-form-error', 'refused URL');

    await page.locator('[data-testid="webhook-url"]').fill(hookUrl('ok'));
    await page.locator('[data-testid="webhook-events-all"]').uncheck();
    expect(await page.locator('[data-testid="webhook-save"]').isDisabled()).toBe(true);
    await page.locator('[data-testid="webhook-group-records"]').check();
    await page.locator('[data-testid="webhook-event"][data-event="table.updated"]').check();
    await page.locator('[data-testid="webhook-table"]').selectOption({ label: 'Leads' });
    await screenshot(page, 'webhooks-create');
    await page.locator('[data-testid="webhook-save"]').click();

    await expectTestId(page, 'webhook-secret-dialog', 'secret dialog');
    secret = (await page.locator('[data-testid="webhook-secret"]').textContent())!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await page.locator('[data-testid="webhook-secret-warning"]').textContent()).toMatch(/not see it again/i);
    await page.locator('[data-testid="copy-webhook-secret"]').click();
    await expect.poll(() => page.locator('[data-testid="copy-webhook-secret"]').getAttribute('data-state')).not.toBe('idle');
    await screenshot(page, 'webhooks-secret');
    await page.locator('[data-testid="webhook-secret-done"]').click();

    const r = row(hookUrl('ok'));
    await r.waitFor();
    webhookId = (await r.getAttribute('data-id'))!;
    expect(await r.textContent()).toContain('record.created');
    expect(await r.textContent()).toContain('Leads');
    // Never again: not on the page, not after a reload, not from the API.
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await r.waitFor();
    expect(await page.content()).not.toContain(secret);
    const api = await e2e.admin.call('POST', '/graphql', { query: 'query($id: ID!) { webhook(id: $id) { secret events tableId } }', variables: { id: webhookId } });
    expect(api.body.data.webhook.secret).toBeNull();
    expect(new Set(api.body.data.webhook.events)).toEqual(new Set(['record.created', 'record.updated', 'record.deleted', 'table.updated']));
  });

  it('sends a test ping: delivered with 200, signed with the secret; redelivery queues it again with the same webhook-id', async () => {
    await row(hookUrl('ok')).locator('[data-testid="webhook-ping"]').click();
    const list = await expectTestId(page, 'webhook-deliveries', 'deliveries list');
    const delivery = list.locator('[data-testid="delivery-row"]').first();
    await expect.poll(() => delivery.getAttribute('data-status'), { timeout: 15_000 }).toBe('delivered');
    expect(await delivery.getAttribute('data-event-type')).toBe('ping');
    expect((await delivery.locator('[data-testid="delivery-response"]').textContent())!.trim()).toBe('200');
    expect((await delivery.locator('[data-testid="delivery-attempts"]').textContent())!.trim()).toBe('1');

    const pings = received.filter((x) => x.path === '/hook/ok');
    expect(pings.length).toBe(1);
    // The secret shown once is the one that signs.
    expect(() => new Verifier(secret).verify(pings[0].body, pings[0].headers)).not.toThrow();
    await screenshot(page, 'webhooks-deliveries');

    await delivery.locator('[data-testid="delivery-redeliver"]').click();
    await expect.poll(() => list.locator('[data-testid="delivery-row"]').count()).toBe(2);
    await expect.poll(() => list.locator('[data-testid="delivery-row"][data-status="delivered"]').count(), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => received.filter((x) => x.path === '/hook/ok').length).toBe(2);
    const [first, again] = received.filter((x) => x.path === '/hook/ok');
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
  });

  it('shows a failing receiver\'s deliveries with the response code and error; the switch disables a webhook; delete asks first', async () => {
    await e2e.admin.data('POST', `/api/v1/bases/${baseId}/webhooks`, { url: hookUrl('down'), events: ['*'] }, 201);
    await page.reload();
    const down = row(hookUrl('down'));
    await down.waitFor();
    await down.locator('[data-testid="webhook-ping"]').click();
    const list = page.locator(`[data-testid="webhook-deliveries"][data-webhook-id="${await down.getAttribute('data-id')}"]`);
    const delivery = list.locator('[data-testid="delivery-row"]').first();
    await expect.poll(() => delivery.getAttribute('data-status'), { timeout: 15_000 }).toBe('failed');
    expect((await delivery.locator('[data-testid="delivery-response"]').textContent())!.trim()).toBe('503');
    expect((await delivery.locator('[data-testid="delivery-attempts"]').textContent())!.trim()).toBe('3');
    expect((await delivery.locator('[data-testid="delivery-error"]').textContent())!.length).toBeGreaterThan(0);
    await screenshot(page, 'webhooks-failed-delivery');

    // 20 failed events in a row (pings do not count; 20 created records do): the service disables the webhook and the page says why.
    const id = (await down.getAttribute('data-id'))!;
    await e2e.admin.data('POST', `/api/v1/tables/${tableId}/records/batch`, { action: 'create', records: Array.from({ length: 20 }, (_, i) => ({ fields: { Name: `lead ${i}` } })) }, 200);
    await expect.poll(async () => (await e2e.admin.data('GET', `/api/v1/webhooks/${id}`, undefined, 200)).enabled, { timeout: 20_000 }).toBe(false);
    await page.reload();
    await down.waitFor();
    expect(await down.getAttribute('data-enabled')).toBe('false');
    expect((await down.locator('[data-testid="webhook-disabled-reason"]').textContent())!.length).toBeGreaterThan(0);
    expect(await down.locator('[data-testid="webhook-ping"]').isDisabled()).toBe(true);
    await screenshot(page, 'webhooks-disabled');
    // On again (which clears the reason), then off and on with the switch; the API agrees.
    await down.locator('[data-testid="webhook-enabled"]').check();
    await expect.poll(() => down.getAttribute('data-enabled')).toBe('true');
    expect(await down.locator('[data-testid="webhook-disabled-reason"]').count()).toBe(0);
    await down.locator('[data-testid="webhook-enabled"]').uncheck();
    await expect.poll(() => down.getAttribute('data-enabled')).toBe('false');
    expect(await down.locator('[data-testid="webhook-ping"]').isDisabled()).toBe(true);
    expect((await e2e.admin.data('GET', `/api/v1/webhooks/${id}`, undefined, 200)).enabled).toBe(false);
    await down.locator('[data-testid="webhook-enabled"]').check();
    await expect.poll(() => down.getAttribute('data-enabled')).toBe('true');

    // Delete: a confirmation first; cancelling keeps it.
    await down.locator('[data-testid="webhook-delete"]').click();
    await expectTestId(page, 'confirm-dialog', 'delete confirmation');
    await page.locator('[data-testid="confirm-cancel"]').click();
    expect(await down.count()).toBe(1);
    await down.locator('[data-testid="webhook-delete"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await expect.poll(() => down.count()).toBe(0);
    expect((await e2e.admin.call('GET', `/api/v1/webhooks/${id}`)).status).toBe(404);
  });
});
