// Event subscriptions over real HTTP SSE (contract section 14): in order, once each, resumable with Last-Event-ID, and
// never another base's events.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
let server: http.Server;
let origin: string;

beforeAll(async () => {
  c = await makeApp();
  server = http.createServer(createServerAdapter((request: Request) => c.app.fetch(request, '127.0.0.1')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await c.close();
});

interface SseMessage { id?: string; event?: string; data?: any }

/** Opens a subscription over SSE; `messages` fills as they arrive, `close` hangs up. */
function subscribe(token: string, query: string, variables: Record<string, unknown>, lastEventId?: string) {
  const messages: SseMessage[] = [];
  const controller = new AbortController();
  const done = (async () => {
    const res = await fetch(`${origin}/graphql`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const m: SseMessage = {};
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) m.id = line.slice(4);
          else if (line.startsWith('event: ')) m.event = line.slice(7);
          else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6));
        }
        if (m.event) messages.push(m);
      }
    }
  })().catch((e) => {
    if ((e as Error).name !== 'AbortError') throw e;
  });
  return { messages, close: () => controller.abort(), done };
}

const TABLE_EVENTS = 'subscription($t: ID!, $after: String) { tableEvents(tableId: $t, after: $after) { seq type recordId actor data } }';
const BASE_EVENTS = 'subscription($b: ID!) { baseEvents(baseId: $b) { seq type baseId } }';
const until = async (check: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('event subscriptions over SSE', () => {
  it('every event of 1,000 writes by three clients, in order and once, across a reconnect with Last-Event-ID', async () => {
    const owner = await c.user('Sub');
    const baseId = owner.defaultBaseId;
    const t = await makeTable(c, [{ name: 'N', type: 'number' }], { baseId, token: owner.token });
    const writers = [owner, await c.user('W1'), await c.user('W2')];
    for (const w of writers.slice(1)) await c.request('PUT', `/api/v1/bases/${baseId}/members/${w.id}`, { token: owner.token, body: { role: 'editor' } });

    const first = subscribe(owner.token, TABLE_EVENTS, { t });
    await until(() => true);
    await new Promise((r) => setTimeout(r, 300)); // the subscription has read its starting cursor
    const write = async (w: typeof owner, i: number) => {
      const res = await c.request('POST', `/api/v1/tables/${t}/records`, { token: w.token, body: { fields: { N: i } } });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    };
    // 1,000 creates: three clients writing at once, in two halves with a reconnect between them.
    const half = async (from: number, to: number) => {
      const jobs: Promise<void>[] = [];
      for (let k = 0; k < 3; k++) jobs.push((async () => { for (let i = from + k; i < to; i += 3) await write(writers[k], i); })());
      await Promise.all(jobs);
    };
    await half(0, 500);
    await until(() => first.messages.length >= 250);
    first.close();
    await first.done;
    const lastId = first.messages[first.messages.length - 1].id!;
    expect(lastId).toBe(first.messages[first.messages.length - 1].data.data.tableEvents.seq);
    await half(500, 1000);
    const second = subscribe(owner.token, TABLE_EVENTS, { t }, lastId);
    const seen = () => [...first.messages, ...second.messages].filter((m) => m.event === 'next');
    await until(() => seen().length >= 1000);
    await new Promise((r) => setTimeout(r, 300));
    second.close();
    await second.done;
    const events = seen().map((m) => m.data.data.tableEvents);
    expect(events.length).toBe(1000);
    const seqs = events.map((e) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(1000);
    expect(new Set(events.map((e) => e.data.after.N))).toEqual(new Set(Array.from({ length: 1000 }, (_, i) => i)));
    expect(new Set(events.map((e) => e.actor.id))).toEqual(new Set(writers.map((w) => w.id)));
  }, 120_000);

  it('a viewer of one base never receives another base\'s events, and cannot subscribe to it', async () => {
    const a = await c.user('Ann');
    const b = await c.user('Ben');
    const ta = await makeTable(c, [{ name: 'N', type: 'number' }], { baseId: a.defaultBaseId, token: a.token });
    const tb = await makeTable(c, [{ name: 'N', type: 'number' }], { baseId: b.defaultBaseId, token: b.token });
    const mine = subscribe(a.token, BASE_EVENTS, { b: a.defaultBaseId });
    const theirs = subscribe(a.token, BASE_EVENTS, { b: b.defaultBaseId });
    await new Promise((r) => setTimeout(r, 300));
    await c.request('POST', `/api/v1/tables/${tb}/records`, { token: b.token, body: { fields: { N: 1 } } });
    await c.request('POST', `/api/v1/tables/${ta}/records`, { token: a.token, body: { fields: { N: 2 } } });
    await until(() => mine.messages.length >= 1);
    await until(() => theirs.messages.length >= 1);
    mine.close();
    theirs.close();
    await Promise.all([mine.done, theirs.done]);
    expect(mine.messages.every((m) => m.event !== 'next' || m.data.data.baseEvents.baseId === a.defaultBaseId)).toBe(true);
    expect(mine.messages.filter((m) => m.event === 'next').length).toBe(1);
    const refused = theirs.messages.find((m) => m.event === 'next');
    expect(refused?.data.errors?.[0]?.message).toBeTruthy();
    expect(refused?.data.data ?? null).toBeNull();
  });

  it('a subscriber that hangs up is no longer served, though no event arrives to end its stream', async () => {
    const u = await c.user('Quitter');
    const t = await makeTable(c, [{ name: 'N', type: 'number' }], { baseId: u.defaultBaseId, token: u.token });
    const open = c.app.services.events.openStreams();
    const subs = Array.from({ length: 5 }, () => subscribe(u.token, TABLE_EVENTS, { t }));
    await until(() => c.app.services.events.openStreams() === open + 5);
    for (const s of subs) s.close();
    await Promise.all(subs.map((s) => s.done));
    // Without a write to the table: each stream waits for its next event and must still notice the hang-up.
    await until(() => c.app.services.events.openStreams() === open, 3_000);
  });
});
