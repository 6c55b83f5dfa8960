// The filters that spare a fresh Idempotency-Key its lookup on SQLite (src/domain/idempotency-seen.ts): never a "no" for
// a key that has a live row, "maybe" for everything until the database's rows are read, and a restart still replays.
import { describe, expect, it } from 'vitest';
import { createSeenKeys } from '../src/domain/idempotency-seen.js';
import { ENGINE } from './database.js';
import { makeApp } from './helpers.js';

const DAY = 86_400_000;

describe('the keys that may have a row (idempotency-seen.ts)', () => {
  it('never rules out a key it was given until that key expires, and rules out nearly every other', () => {
    let now = 0;
    const seen = createSeenKeys(() => now);
    expect(seen.mayHave('user:a\nk')).toBe(true); // the database's rows are not read yet
    seen.loaded();
    const ids = Array.from({ length: 50_000 }, (_, i) => `user:usr${i % 7}\nkey-${i}`);
    // Two and a half hours of keys: several generations.
    ids.forEach((id, i) => {
      now = i * 180;
      seen.add(id, now + DAY);
    });
    expect(ids.every((id) => seen.mayHave(id))).toBe(true);
    const others = Array.from({ length: 20_000 }, (_, i) => `user:usr${i % 7}\nother-${i}`);
    expect(others.filter((id) => seen.mayHave(id)).length).toBeLessThan(others.length / 50);
    now += 2 * DAY;
    expect(ids.some((id) => seen.mayHave(id))).toBe(false);
  });

  it.runIf(ENGINE === 'sqlite')('a restarted service replays the answers of the run before it', async () => {
    const c = await makeApp({ DATABASE_URL: '' });
    const table = await c.request('POST', '/api/v1/tables', { body: { name: 'Seen', fields: [{ name: 'Name', type: 'text' }] } });
    const url = `/api/v1/tables/${table.body.data.id}/records`;
    const body = { fields: { Name: 'once' } };
    const answered = await c.request('POST', url, { body, headers: { 'idempotency-key': 'seen-1' } });
    expect(answered.status).toBe(201);
    await c.restart();
    try {
      // At once (the rows may not be read yet: looked up) and a moment later (read: found by the filters).
      for (const wait of [0, 200]) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        const repeat = await c.request('POST', url, { body, headers: { 'idempotency-key': 'seen-1' } });
        expect(repeat.status).toBe(201);
        expect(repeat.headers.get('idempotent-replayed')).toBe('true');
        expect(repeat.body.data.id).toBe(answered.body.data.id);
        const other = await c.request('POST', url, { body, headers: { 'idempotency-key': `seen-other-${wait}` } });
        expect(other.headers.get('idempotent-replayed')).toBeNull();
        expect(other.body.data.id).not.toBe(answered.body.data.id);
      }
    } finally {
      await c.close();
    }
  });
});
