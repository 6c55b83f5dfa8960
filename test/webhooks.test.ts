// Webhooks (contract section 14) against a real HTTP receiver on loopback: signed with Standard Webhooks (checked with the
// reference library), every event delivered through failures, timeouts and a restart, retried on the schedule, disabled
// after 20 failed events, pings and redeliveries, SSRF refusals, permissions, and nothing queued for a rolled-back write.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as Verifier } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookWorker } from '../src/domain/webhooks/index.js';
import type { FetchAnswer } from '../src/net/ssrf-guard.js';
import { capturedSql, ENGINE, testSql } from './database.js';
import { makeApp, makeTable, type TestClient } from './helpers.js';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status the receiver answered, or 'hang' when it never did. */
  answer: number | 'hang';
  at: number;
}
/** What a path answers: a status, or 'hang' (no answer until long past the webhook timeout). */
type Behaviour = (r: { id: string; attempt: number; body: string }) => number | 'hang';

const TIMEOUT_MS = 400;
const SCHEDULE = [30, 60, 60]; // four attempts
const behaviours = new Map<string, Behaviour>();
const received: Received[] = [];
const attemptsById = new Map<string, number>();
let server: http.Server;
let port = 0;
let c: TestClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const attempt = (attemptsById.get(`${req.url} ${id}`) ?? 0) + 1;
      attemptsById.set(`${req.url} ${id}`, attempt);
      const answer = (behaviours.get(req.url ?? '') ?? (() => 200))({ id, attempt, body });
      received.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, body, answer, at: Date.now() });
      if (answer === 'hang') {
        setTimeout(() => res.writeHead(200).end('too late'), TIMEOUT_MS * 3).unref();
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? `receiver says ${answer}` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  c = await makeApp({
    PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${port}`, WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(','), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  });
});
afterAll(async () => {
  await c?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ok = (res: { status: number; body: any }, status = 200) => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
const hookUrl = (name: string, host = '127.0.0.1') => `http://${host}:${port}/hook/${name}`;
async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const deliveriesOf = async (webhookId: string) => ok(await c.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`)) as any[];
const allSettled = (webhookId: string, n: number) => until(`${n} settled deliveries`, async () => {
  const list = await deliveriesOf(webhookId);
  return list.length >= n && list.every((d) => d.status !== 'pending') && list;
});
async function createHook(baseId: string, body: Record<string, unknown>, token?: string) {
  return ok(await c.request('POST', `/api/v1/bases/${baseId}/webhooks`, { token, body }), 201);
}

describe('webhook management', () => {
  it('creates, lists, changes and deletes; the secret is in the create answer only', async () => {
    const owner = await c.user('Wanda');
    const baseId = owner.defaultBaseId;
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: owner.token });
    const created = await createHook(baseId, { url: hookUrl('manage'), events: ['record.created', 'record.created', 'table.updated'], table_id: t }, owner.token);
    expect(created).toMatchObject({ base_id: baseId, url: hookUrl('manage'), events: ['record.created', 'table.updated'], table_id: t, enabled: true, disabled_reason: null, consecutive_failures: 0 });
    expect(created.id).toMatch(/^whk/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);

    const one = ok(await c.request('GET', `/api/v1/webhooks/${created.id}`, { token: owner.token }));
    expect(one).not.toHaveProperty('secret');
    const { secret: _secret, ...shown } = created;
    expect(one).toEqual(shown);
    expect(ok(await c.request('GET', `/api/v1/bases/${baseId}/webhooks`, { token: owner.token }))).toEqual([shown]);
    const gql = await c.graphql('query($b: ID!) { webhooks(baseId: $b) { id secret } }', { b: baseId }, owner.token);
    expect(gql.body.data.webhooks).toEqual([{ id: created.id, secret: null }]);

    const changed = ok(await c.request('PUT', `/api/v1/webhooks/${created.id}`, { token: owner.token, body: { events: ['*'], table_id: null, enabled: false } }));
    expect(changed).toMatchObject({ events: ['*'], table_id: null, enabled: false, url: hookUrl('manage') });
    expect(changed).not.toHaveProperty('secret');
    expect(changed.updated_at >= created.updated_at).toBe(true);
    expect(ok(await c.request('DELETE', `/api/v1/webhooks/${created.id}`, { token: owner.token }))).toEqual({ id: created.id, deleted: true });
    expect((await c.request('GET', `/api/v1/webhooks/${created.id}`, { token: owner.token })).status).toBe(404);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const owner = await c.user('Val');
    const baseId = owner.defaultBaseId;
    const other = await c.user('Otto');
    const foreign = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId: other.defaultBaseId, token: other.token });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ events: ['*'] }, 'url'],
      [{ url: hookUrl('v') }, 'events'],
      [{ url: 'ftp://example.com/x', events: ['*'] }, 'url'],
      [{ url: 'not a url', events: ['*'] }, 'url'],
      [{ url: 'http://user:pw@example.com/', events: ['*'] }, 'url'],
      [{ url: 'http://127.0.0.1:9/hook', events: ['*'] }, 'url'],
      [{ url: 'http://10.1.2.3/hook', events: ['*'] }, 'url'],
      [{ url: 'http://[::1]:8080/', events: ['*'] }, 'url'],
      [{ url: hookUrl('v'), events: [] }, 'events'],
      [{ url: hookUrl('v'), events: ['record.created', 'record.exploded'] }, 'events[1]'],
      [{ url: hookUrl('v'), events: ['*'], table_id: foreign }, 'table_id'],
      [{ url: hookUrl('v'), events: ['*'], secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await c.request('POST', `/api/v1/bases/${baseId}/webhooks`, { token: owner.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('BAD_REQUEST');
      expect(JSON.stringify(res.body.details ?? res.body.msg), JSON.stringify(body)).toContain(field);
    }
    const w = await createHook(baseId, { url: hookUrl('v'), events: ['*'] }, owner.token);
    const bad = await c.request('PUT', `/api/v1/webhooks/${w.id}`, { token: owner.token, body: { url: 'http://192.168.1.1/' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'url', message: expect.stringContaining('private') }]);
    expect(ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token })).url).toBe(hookUrl('v'));
  });

  it('is for base admins: editors and viewers get 403, strangers 403, unknown ids 404, no token 401', async () => {
    const owner = await c.user('Ada');
    const baseId = owner.defaultBaseId;
    const w = await createHook(baseId, { url: hookUrl('perm'), events: ['*'] }, owner.token);
    const admin = await c.user('Adam');
    ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${admin.id}`, { token: owner.token, body: { role: 'admin' } }));
    expect(ok(await c.request('GET', `/api/v1/bases/${baseId}/webhooks`, { token: admin.token }))).toHaveLength(1);
    for (const role of ['editor', 'viewer', null] as const) {
      const u = await c.user(`U${role}`);
      if (role) ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${u.id}`, { token: owner.token, body: { role } }));
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/api/v1/bases/${baseId}/webhooks`], ['POST', `/api/v1/bases/${baseId}/webhooks`, { url: hookUrl('x'), events: ['*'] }],
        ['GET', `/api/v1/webhooks/${w.id}`], ['PUT', `/api/v1/webhooks/${w.id}`, { enabled: false }], ['DELETE', `/api/v1/webhooks/${w.id}`],
        ['POST', `/api/v1/webhooks/${w.id}/test`], ['GET', `/api/v1/webhooks/${w.id}/deliveries`],
        ['POST', `/api/v1/webhooks/${w.id}/deliveries/dlvNOPE/redeliver`],
      ];
      for (const [method, path, body] of calls) {
        const res = await c.request(method, path, { token: u.token, body });
        expect(res.status, `${role} ${method} ${path}`).toBe(403);
      }
    }
    expect((await c.request('GET', '/api/v1/webhooks/whkNOPE', { token: owner.token })).status).toBe(404);
    expect((await c.request('GET', '/api/v1/bases/bseNOPE/webhooks', { token: owner.token })).status).toBe(404);
    expect((await c.request('POST', `/api/v1/webhooks/${w.id}/deliveries/dlvNOPE/redeliver`, { token: owner.token })).status).toBe(404);
    expect((await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: null })).status).toBe(401);
    expect(ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token })).enabled).toBe(true);
  });
});

describe('webhook delivery', () => {
  it('delivers every event once verified, through failures, timeouts and a restart, with the event as the API shows it', async () => {
    const owner = await c.user('Del');
    const baseId = owner.defaultBaseId;
    // Per event: succeed at once, fail (500) then succeed, or time out, fail, then succeed: three turns, all within four attempts.
    const turns = new Map<string, number>();
    behaviours.set('/hook/turns', ({ id, attempt }) => {
      if (!turns.has(id)) turns.set(id, turns.size % 3);
      const plan = [[200], [500, 200], ['hang', 503, 200]][turns.get(id)!] as Array<number | 'hang'>;
      return plan[Math.min(attempt, plan.length) - 1];
    });
    const w = await createHook(baseId, { url: hookUrl('turns'), events: ['*'] }, owner.token);
    const verifier = new Verifier(w.secret);
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }], { baseId, token: owner.token });
    const write = async (i: number) => {
      const r = ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: owner.token, body: { fields: { Name: `r${i}`, N: i } } }), 201);
      ok(await c.request('PUT', `/api/v1/tables/${t}/records/${r.id}`, { token: owner.token, body: { fields: { N: i + 100 } } }));
      if (i % 4 === 0) ok(await c.request('DELETE', `/api/v1/tables/${t}/records/${r.id}`, { token: owner.token }));
    };
    for (let i = 0; i < 8; i++) await write(i);
    const [{ n: pending }] = await testSql(c.app).rows<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending'", [w.id]);
    expect(Number(pending)).toBeGreaterThan(0);
    // Restart while deliveries are in flight or waiting for their retry: none may be lost.
    await c.restart();
    for (let i = 8; i < 16; i++) await write(i);
    ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { token: owner.token, body: { name: 'Extra', type: 'text' } }), 201);

    const events = ok(await c.request('GET', `/api/v1/bases/${baseId}/events?limit=1000`, { token: owner.token })).items as any[];
    expect(events.length).toBeGreaterThan(30);
    const delivered = await until('every event delivered', async () => {
      const got = new Map<string, Received>();
      for (const r of received) if (r.path === '/hook/turns' && r.answer === 200) got.set(r.headers['webhook-id'], r);
      return events.every((e) => got.has(e.id)) && got;
    });
    expect(delivered.size).toBe(events.length);
    for (const e of events) {
      const r = delivered.get(e.id)!;
      expect(r.headers['content-type']).toBe('application/json');
      // The reference library checks the signature and the timestamp and hands back the parsed body.
      expect(verifier.verify(r.body, r.headers)).toEqual(e);
    }
    // Every attempt, retries included, carries the event id as webhook-id and a valid signature.
    const attempts = received.filter((r) => r.path === '/hook/turns');
    for (const r of attempts) expect(() => verifier.verify(r.body, r.headers)).not.toThrow();
    expect(attempts.some((r) => r.answer === 'hang')).toBe(true);
    expect(attempts.some((r) => r.answer === 500)).toBe(true);
    const log = await allSettled(w.id, Math.min(events.length, 100));
    expect(log.every((d) => d.status === 'delivered' && d.last_error === null && d.delivered_at)).toBe(true);
    // Each took at least its turn's attempts, and within the schedule (an answer slowed past the timeout by a loaded
    // machine costs one more attempt, so exact counts are not asked).
    for (const d of log) expect(d.attempts, d.event_id).toBeGreaterThanOrEqual(turns.get(d.event_id)! + 1);
    expect(log.every((d) => d.attempts <= SCHEDULE.length + 1)).toBe(true);
    const counts = new Set(log.map((d) => d.attempts));
    expect([1, 2, 3].every((n) => counts.has(n))).toBe(true);
    expect(log.map((d) => d.created_at)).toEqual([...log.map((d) => d.created_at)].sort().reverse());
    expect(ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token })).consecutive_failures).toBe(0);
  });

  it('retries on the schedule, then fails; 20 failed events in a row disable the webhook; a success resets the count', async () => {
    const owner = await c.user('Fay');
    const baseId = owner.defaultBaseId;
    let up = false;
    behaviours.set('/hook/down', () => (up ? 204 : 503));
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: owner.token });
    const w = await createHook(baseId, { url: hookUrl('down'), events: ['record.created'], table_id: t }, owner.token);
    ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: owner.token, body: { fields: { Name: 'a' } } }), 201);
    const [first] = await allSettled(w.id, 1);
    expect(first).toMatchObject({ status: 'failed', attempts: SCHEDULE.length + 1, last_status: 503, event_type: 'record.created', next_attempt_at: null, delivered_at: null });
    expect(first.last_error).toBe('HTTP 503: receiver says 503');
    const times = received.filter((r) => r.path === '/hook/down' && r.headers['webhook-id'] === first.event_id);
    expect(times).toHaveLength(SCHEDULE.length + 1);
    // Each retry waited at least its delay of the schedule (WEBHOOK_RETRY_SCHEDULE_MS).
    SCHEDULE.forEach((delay, i) => expect(times[i + 1].at - times[i].at).toBeGreaterThanOrEqual(delay - 2));
    expect(ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token })).consecutive_failures).toBe(1);

    up = true;
    ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: owner.token, body: { fields: { Name: 'b' } } }), 201);
    await allSettled(w.id, 2);
    expect(ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token })).consecutive_failures).toBe(0);

    up = false;
    const batch = Array.from({ length: 20 }, (_, i) => ({ fields: { Name: `f${i}` } }));
    ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { token: owner.token, body: { action: 'create', records: batch } }));
    const list = await allSettled(w.id, 22);
    expect(list.filter((d) => d.status === 'failed')).toHaveLength(21);
    const disabled = await until('disabled', async () => {
      const hook = ok(await c.request('GET', `/api/v1/webhooks/${w.id}`, { token: owner.token }));
      return !hook.enabled && hook;
    });
    expect(disabled.consecutive_failures).toBe(20);
    expect(disabled.disabled_reason).toMatch(/20 events in a row failed.*HTTP 503/);
    // Disabled: new events queue nothing, and a test is refused.
    ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: owner.token, body: { fields: { Name: 'ignored' } } }), 201);
    expect(await deliveriesOf(w.id)).toHaveLength(22);
    expect((await c.request('POST', `/api/v1/webhooks/${w.id}/test`, { token: owner.token })).status).toBe(409);
    const again = ok(await c.request('PUT', `/api/v1/webhooks/${w.id}`, { token: owner.token, body: { enabled: true } }));
    expect(again).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
  });

  it('sends a ping on test and queues a delivery again on redeliver, with the same webhook-id', async () => {
    const owner = await c.user('Pia');
    const baseId = owner.defaultBaseId;
    const w = await createHook(baseId, { url: hookUrl('ping'), events: ['table.created'] }, owner.token);
    const ping = ok(await c.request('POST', `/api/v1/webhooks/${w.id}/test`, { token: owner.token }));
    expect(ping).toMatchObject({ webhook_id: w.id, event_type: 'ping', status: 'pending', attempts: 0 });
    const [done] = await allSettled(w.id, 1);
    expect(done).toMatchObject({ id: ping.id, status: 'delivered', attempts: 1, last_status: 200 });
    const got = received.filter((r) => r.path === '/hook/ping');
    expect(got).toHaveLength(1);
    const body = new Verifier(w.secret).verify(got[0].body, got[0].headers) as any;
    expect(body).toMatchObject({ id: ping.event_id, type: 'ping', base_id: baseId, actor: { type: 'user', id: owner.id }, data: { webhook_id: w.id } });

    const again = ok(await c.request('POST', `/api/v1/webhooks/${w.id}/deliveries/${ping.id}/redeliver`, { token: owner.token }));
    expect(again).toMatchObject({ event_id: ping.event_id, event_type: 'ping', status: 'pending', attempts: 0 });
    expect(again.id).not.toBe(ping.id);
    const log = await allSettled(w.id, 2);
    expect(log.map((d) => d.id)).toEqual([again.id, ping.id]);
    const both = received.filter((r) => r.path === '/hook/ping');
    expect(both.map((r) => r.headers['webhook-id'])).toEqual([ping.event_id, ping.event_id]);
    expect(both[1].body).toBe(both[0].body);
    // GraphQL: the same operations the UI uses.
    const gql = await c.graphql('mutation($id: ID!) { testWebhook(id: $id) { id eventType status webhookId } }', { id: w.id }, owner.token);
    expect(gql.body.data.testWebhook).toMatchObject({ eventType: 'ping', status: 'pending', webhookId: w.id });
  });

  it('records a URL whose name resolves to a private address as failed attempts, SSRF_BLOCKED', async () => {
    const owner = await c.user('Sam');
    const w = await createHook(owner.defaultBaseId, { url: hookUrl('ssrf', 'localhost'), events: ['*'] }, owner.token);
    ok(await c.request('POST', `/api/v1/webhooks/${w.id}/test`, { token: owner.token }));
    const [d] = await allSettled(w.id, 1);
    expect(d).toMatchObject({ status: 'failed', attempts: SCHEDULE.length + 1, last_status: null });
    expect(d.last_error).toMatch(/^SSRF_BLOCKED: localhost resolves to a private address/);
    expect(received.filter((r) => r.path === '/hook/ssrf')).toEqual([]);
  });

  it('queues nothing for a write that rolls back, and a base without webhooks pays no webhook query', async () => {
    const owner = await c.user('Rolf');
    const baseId = owner.defaultBaseId;
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: owner.token });
    const w = await createHook(baseId, { url: hookUrl('rollback'), events: ['*'] }, owner.token);
    await expect(c.app.store.transaction(async (tx) => {
      await c.app.services.events.append(tx, baseId, null, [{ type: 'record.created', tableId: t, recordId: 'recGHOST', data: { after: {} } }]);
      throw new Error('roll back');
    })).rejects.toThrow('roll back');
    await c.app.deliveries.idle();
    expect(await deliveriesOf(w.id)).toEqual([]);
    expect(received.filter((r) => r.path === '/hook/rollback')).toEqual([]);

    const quiet = await c.user('Quinn');
    const qt = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId: quiet.defaultBaseId, token: quiet.token });
    const sent = await capturedSql(c.app, async () => {
      ok(await c.request('POST', `/api/v1/tables/${qt}/records`, { token: quiet.token, body: { fields: { Name: 'x' } } }), 201);
    });
    expect(sent.filter((s) => /webhook/i.test(s))).toEqual([]);
  });

  it('a delivery that a process claimed and then died with is attempted once its lease lapses', async () => {
    const owner = await c.user('Lea');
    const w = await createHook(owner.defaultBaseId, { url: hookUrl('lease'), events: ['*'] }, owner.token);
    // As a claim leaves it: pending, due, leased by a process that is gone.
    const now = new Date().toISOString();
    const leaseEnds = Date.now() + 600;
    const body = JSON.stringify({ id: 'evtLEASEDxxxxxxxxx', type: 'ping' });
    await testSql(c.app).run(`INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, lease_until, created_at)
      VALUES (?, ?, ?, 'ping', ?, 'pending', 0, ?, ?, ?)`, ['dlvLEASEDxxxxxxxxx', w.id, 'evtLEASEDxxxxxxxxx', body, now, new Date(leaseEnds).toISOString(), now]);
    c.app.deliveries.wake();
    const got = await until('the delivery after its lease', async () => received.find((r) => r.path === '/hook/lease'));
    expect(got.at).toBeGreaterThanOrEqual(leaseEnds);
    expect(got.headers['webhook-id']).toBe('evtLEASEDxxxxxxxxx');
    const [d] = await allSettled(w.id, 1);
    expect(d).toMatchObject({ id: 'dlvLEASEDxxxxxxxxx', status: 'delivered', attempts: 1 });
  });

  it('a lease renewal that waited for an attempt to be recorded does not hold the retry back', async () => {
    // A worker of its own (the app's is stopped) renews its leases every millisecond beside slow failing attempts, so a
    // renewal often takes its list of held deliveries before an outcome commits and writes after it. The retries are due
    // within 40 ms; a renewal that leased the settled delivery again would hold each back for the whole 60 s lease.
    const d = await makeApp({ PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${port}` });
    await d.app.deliveries.stop();
    const worker = createWebhookWorker({
      store: d.app.store, queue: d.app.services.webhookQueue, schedule: [20, 20], timeoutMs: 1000, userAgent: 'test', leaseMs: 60_000, pollMs: 1,
      fetch: async (req): Promise<FetchAnswer> => {
        await new Promise((r) => setTimeout(r, 15));
        return { status: 503, headers: {}, body: Buffer.from('down'), url: req.url };
      },
    });
    try {
      worker.start();
      const w = ok(await d.request('POST', `/api/v1/bases/${(await d.user('Rena')).defaultBaseId}/webhooks`, { body: { url: hookUrl('renewed'), events: ['*'] } }), 201);
      for (let i = 0; i < 5; i++) ok(await d.request('POST', `/api/v1/webhooks/${w.id}/test`));
      const settled = await until('five pings failed after three attempts each', async () => {
        const list = ok(await d.request('GET', `/api/v1/webhooks/${w.id}/deliveries`)) as any[];
        return list.length === 5 && list.every((x) => x.status === 'failed') && list;
      }, 10_000);
      expect(settled.map((x) => x.attempts)).toEqual([3, 3, 3, 3, 3]);
    } finally {
      await worker.stop();
      await d.close();
    }
  });

  it('deleting the base deletes its webhooks and their deliveries', async () => {
    const owner = await c.user('Bea');
    const base = ok(await c.request('POST', '/api/v1/bases', { token: owner.token, body: { name: 'Doomed' } }), 201);
    const w = await createHook(base.id, { url: hookUrl('doomed'), events: ['*'] }, owner.token);
    ok(await c.request('POST', `/api/v1/webhooks/${w.id}/test`, { token: owner.token }));
    await allSettled(w.id, 1);
    ok(await c.request('DELETE', `/api/v1/bases/${base.id}`, { token: owner.token }));
    const sql = testSql(c.app);
    expect(await sql.rows('SELECT id FROM webhooks WHERE id = ?', [w.id])).toEqual([]);
    expect(await sql.rows('SELECT id FROM webhook_deliveries WHERE webhook_id = ?', [w.id])).toEqual([]);
  });

  it('two processes over one PostgreSQL database deliver each event once', async () => {
    if (ENGINE !== 'postgres') {
      console.log('SKIPPED on SQLite: one process serves a SQLite file');
      return;
    }
    const second = await makeApp({
      DATABASE_URL: c.databaseUrl!, PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${port}`, WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(','),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    try {
      const owner = await c.user('Max');
      const baseId = owner.defaultBaseId;
      const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: owner.token });
      const w = await createHook(baseId, { url: hookUrl('twice'), events: ['record.created'] }, owner.token);
      for (let i = 0; i < 10; i++) {
        const records = Array.from({ length: 20 }, (_, j) => ({ fields: { Name: `p${i}-${j}` } }));
        const via = i % 2 ? second : c;
        ok(await via.request('POST', `/api/v1/tables/${t}/records/batch`, { token: owner.token, body: { action: 'create', records } }));
      }
      await until('200 deliveries', async () => received.filter((r) => r.path === '/hook/twice').length >= 200);
      await Promise.all([c.app.deliveries.idle(), second.app.deliveries.idle()]);
      const ids = received.filter((r) => r.path === '/hook/twice').map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(200);
      expect(new Set(ids).size).toBe(200);
      expect((await deliveriesOf(w.id)).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    } finally {
      await second.app.close();
      fs.rmSync(second.dir, { recursive: true, force: true });
    }
  });
});
