// Rate limits and login throttling shared by several processes on one PostgreSQL database (contract: "rate limits count
// across processes (the limit holds for the sum); login throttling counts across processes"). Two apps over one
// database stand for two processes (each has its own pool, as a process would). The PostgreSQL limiter and throttle are
// also held to the in-process ones' exact numbers by replaying the same random script on both with one fake clock.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter, type RateDecision, type RateEntry, type RateLimiter } from '../src/auth/rate-limit.js';
import { createLoginThrottle, type LoginThrottle } from '../src/auth/login-throttle.js';
import { createPgLoginThrottle, createPgRateLimiter } from '../src/db/pg-limits.js';
import type { PgStore } from '../src/db/pg-store.js';
import { AppError } from '../src/errors.js';
import { dropDatabase, ENGINE, freshDatabaseUrl } from './database.js';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';

/** A small deterministic random source, so a failing script can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s % n;
  };
}

/** Replays one random script of charges, hits and peeks on `limiter` (clock set through `setNow`); the answers in order. */
async function limiterScript(limiter: RateLimiter, setNow: (t: number) => void, prefix: string, seed: number): Promise<RateDecision[][]> {
  const r = random(seed);
  const keys = ['a', 'b', 'c'].map((k) => `${prefix}${k}`);
  const limits = [1, 2, 3, 5, 8];
  // From the real time on: the shared tables' sweeps (real clock, other limiters) never reach rows in the future.
  let t = Date.now();
  const out: RateDecision[][] = [];
  for (let i = 0; i < 300; i++) {
    t += [0, 0, 1, 999, 1000, 7_000, 20_000, 59_999, 60_000][r(9)];
    setNow(t);
    const entry = (key: string): RateEntry => ({ key, limit: limits[r(limits.length)], n: [1, 1, 1, 2, 3][r(5)] });
    const op = r(4);
    if (op === 0) out.push([await limiter.peek(keys[r(3)], limits[r(limits.length)], 60_000, 1 + r(3))]);
    else if (op === 1) {
      const e = entry(keys[r(3)]);
      out.push([await limiter.hit(e.key, e.limit, 60_000, e.n)]);
    } else {
      const first = r(3);
      out.push(await limiter.chargeAll([entry(keys[first]), entry(keys[(first + 1 + r(2)) % 3])], 60_000));
    }
  }
  return out;
}

/** What check() answers: undefined, or the refusal's message and Retry-After. */
async function checked(t: LoginThrottle, email: string, address: string): Promise<string | undefined> {
  try {
    await t.check(email, address);
    return undefined;
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return `${e.code} ${e.message} retry-after=${e.headers?.['Retry-After']}`;
  }
}

/**
 * Replays one random script of failures, checks and successes; the check answers in order. `net` (0 to 65535) keeps
 * each replay's addresses apart from every other's in a shared database.
 */
async function throttleScript(t: LoginThrottle, setNow: (ms: number) => void, prefix: string, net: number, seed: number): Promise<Array<string | undefined>> {
  const r = random(seed);
  const emails = ['a', 'b'].map((e) => `${prefix}${e}@x`);
  // Two spellings of one IPv4 address and two addresses of one IPv6 /64 count as one; the last is apart.
  const v4 = `10.${net >> 8}.${net & 255}`;
  const v6 = `2001:db8:${net.toString(16)}:1`;
  const addresses = [`${v4}.7`, `::ffff:${v4}.7`, `${v6}::1`, `${v6}:ffff::2`, `${v4}.8`];
  let now = Date.now(); // as in limiterScript
  const out: Array<string | undefined> = [];
  for (let i = 0; i < 400; i++) {
    now += [0, 10, 500, 1_000, 2_000, 30_000, 120_000, 15 * 60_000, 15 * 60_000 + 1][r(9)];
    setNow(now);
    const email = emails[r(2)];
    const address = addresses[r(addresses.length)];
    const op = r(10);
    if (op < 6) await t.fail(email, address);
    else if (op < 7) await t.succeed(email, address);
    out.push(await checked(t, email, address));
  }
  return out;
}

describe('the in-process limiter (both engines)', () => {
  it('charges several windows all or nothing', async () => {
    const limiter = createRateLimiter(() => 1_000);
    expect(await limiter.chargeAll([{ key: 'o', limit: 5 }, { key: 'w', limit: 2, n: 3 }])).toEqual([
      { allowed: true, limit: 5, remaining: 5, resetSeconds: 0 },
      { allowed: false, limit: 2, remaining: 2, resetSeconds: 60 }, // three never fit in two: the most a wait can be
    ]);
    // Refused by the write window: the request was not counted in the overall one either.
    expect(await limiter.peek('o', 5)).toMatchObject({ remaining: 5 });
    expect(await limiter.chargeAll([{ key: 'o', limit: 5 }, { key: 'w', limit: 2, n: 2 }])).toEqual([
      { allowed: true, limit: 5, remaining: 4, resetSeconds: 0 },
      { allowed: true, limit: 2, remaining: 0, resetSeconds: 60 },
    ]);
  });
});

describe.runIf(ENGINE === 'postgres')('two processes on one PostgreSQL database', () => {
  let url: string;
  let a: TestClient;
  let b: TestClient;
  let baseId: string;
  let tableId: string;
  const oauth: Record<string, { id: string; client_id: string; client_secret: string }> = {};
  const pool = (c: TestClient) => (c.app.store as PgStore).pool;

  beforeAll(async () => {
    url = (await freshDatabaseUrl())!;
    a = await makeApp({ DATABASE_URL: url, TRUST_PROXY: 'true' });
    const base = await a.request('POST', '/api/v1/bases', { body: { name: 'Shared limits' } });
    baseId = base.body.data.id;
    tableId = await makeTable(a, [{ name: 'Name', type: 'text' }], { baseId });
    // The applications exist before the second process starts: it loads the application registry once, at start.
    const limits: Record<string, Record<string, number>> = {
      writes: { rate_limit_per_minute: 100, write_rate_limit_per_minute: 4 },
      reads: { rate_limit_per_minute: 10 },
      both: { rate_limit_per_minute: 3, write_rate_limit_per_minute: 2 },
    };
    for (const [name, l] of Object.entries(limits)) {
      const res = await a.request('POST', '/api/oauth/apps', {
        body: { app_name: name, callback_url: 'https://client.example/cb', scopes: ['base:read', 'table:read', 'record:read', 'record:write'], allowed_bases: [baseId], ...l },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      oauth[name] = res.body.data;
    }
    b = await makeApp({ DATABASE_URL: url, TRUST_PROXY: 'true' });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropDatabase(url);
  });

  async function issue(c: TestClient, name: string) {
    const app = oauth[name];
    const res = await c.request('POST', '/api/oauth/token', { token: null, body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.access_token as string;
  }
  const read = (c: TestClient, token: string) => c.request('GET', `/api/open/v1/bases/${baseId}/tables/${tableId}/records`, { token });
  const write = (c: TestClient, token: string) => c.request('POST', `/api/open/v1/bases/${baseId}/tables/${tableId}/records`, { token, body: { Name: 'w' } });
  const remaining = (res: TestResponse) => res.headers.get('ratelimit-remaining');

  it('an application\'s write limit holds for the sum of the writes through both processes', async () => {
    const token = await issue(a, 'writes');
    const answers: TestResponse[] = [];
    for (let i = 0; i < 6; i++) answers.push(await write(i % 2 ? b : a, token));
    expect(answers.map((x) => x.status)).toEqual([201, 201, 201, 201, 429, 429]);
    expect(answers.map(remaining)).toEqual(['3', '2', '1', '0', '0', '0']);
    for (const x of answers.slice(4)) {
      expect(x.body).toMatchObject({ code: 429, error: 'rate_limit' });
      expect(x.headers.get('ratelimit-limit')).toBe('4');
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('the request window too, with requests arriving at both processes at once', async () => {
    const token = await issue(b, 'reads');
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => read(i % 2 ? a : b, token)));
    expect(answers.filter((x) => x.status === 200).length).toBe(10);
    expect(answers.filter((x) => x.status === 429).length).toBe(6);
    expect(answers.filter((x) => x.status === 200).map(remaining).sort((x, y) => Number(x) - Number(y))).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect((await read(a, token)).status).toBe(429);
    expect((await read(b, token)).status).toBe(429);
  });

  it('a request refused by one window is counted in neither, across processes', async () => {
    const token = await issue(a, 'both');
    expect((await write(a, token)).status).toBe(201);
    expect((await read(b, token)).status).toBe(200);
    expect(remaining(await read(a, token))).toBe('0');
    expect((await write(b, token)).status).toBe(429); // refused by the overall window
    // The write window still holds only the first write.
    const peek = await createPgRateLimiter(pool(a)).peek(`open-write:${oauth.both.id}`, 2);
    expect(peek).toMatchObject({ allowed: true, remaining: 1 });
  });

  const login = (c: TestClient, email: string, password: string, address: string) =>
    c.request('POST', '/api/auth/login', { token: null, body: { email, password }, headers: { 'x-forwarded-for': address } });

  it('login failures counted on one process lock the email out on the other', async () => {
    const u = await a.user('Victim');
    for (let i = 0; i < 5; i++) expect((await login(i < 3 ? a : b, u.email, `wrong-${i}`, `198.51.100.${i + 1}`)).status).toBe(401);
    for (const c of [a, b]) {
      const res = await login(c, u.email, 'password-123', '198.51.100.99');
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: 429, error: 'RATE_LIMITED', data: null });
      expect(res.body.msg).toMatch(/for this email; try again in [12] s/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('an address is locked out by failures made through both processes; a success on one clears the email on both', async () => {
    for (let i = 0; i < 50; i++) expect((await login(i % 2 ? a : b, `made-up-${i}@test.local`, 'guess', '203.0.113.5')).status).toBe(401);
    for (const c of [a, b]) expect((await login(c, 'made-up-next@test.local', 'guess', '203.0.113.5')).body.msg).toMatch(/from this address/);

    const u = await b.user('Forgetful');
    for (let i = 0; i < 4; i++) expect((await login(a, u.email, 'wrong', '192.0.2.1')).status).toBe(401);
    expect((await login(b, u.email, 'password-123', '192.0.2.2')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(a, u.email, 'wrong', '192.0.2.3')).status).toBe(401);
    expect((await login(a, u.email, 'password-123', '192.0.2.4')).status).toBe(200);
  });

  it('failures arriving at both processes at once all count', async () => {
    const u = await a.user('Stormed');
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => login(i % 2 ? a : b, u.email, 'wrong', `192.0.2.${50 + i}`)));
    expect(answers.every((x) => x.status === 401)).toBe(true);
    // Ten failures, five free: the next attempt waits 2^5 s after the last.
    expect((await login(b, u.email, 'password-123', '192.0.2.99')).body.msg).toMatch(/for this email; try again in 3[12] s/);
  });

  it('the shared limiter counts exactly across pools, all or nothing, under concurrent charges', async () => {
    const run = `conc-${Date.now()}-`;
    const limiters = [createPgRateLimiter(pool(a)), createPgRateLimiter(pool(b))];
    const single = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2].hit(`${run}k`, 15)));
    expect(single.filter((d) => d.allowed).length).toBe(15);
    const pairs = await Promise.all(Array.from({ length: 20 }, (_, i) => limiters[i % 2].chargeAll([{ key: `${run}o`, limit: 20 }, { key: `${run}w`, limit: 10, n: 3 }])));
    expect(pairs.filter(([o, w]) => o.allowed && w.allowed).length).toBe(3);
    expect(await limiters[0].peek(`${run}o`, 20)).toMatchObject({ remaining: 17 });
    expect(await limiters[1].peek(`${run}w`, 10)).toMatchObject({ remaining: 1 });
  });

  it('the shared limiter gives the in-process limiter\'s exact answers (same random script, same fake clock)', async () => {
    for (const seed of [1, 2, 3]) {
      let t = 0;
      const expected = await limiterScript(createRateLimiter(() => t), (x) => (t = x), '', seed);
      let u = 0;
      const actual = await limiterScript(createPgRateLimiter(pool(a), { now: () => u }), (x) => (u = x), `script-${seed}-${Date.now()}-`, seed);
      expect(actual).toEqual(expected);
      // The script reaches refusals, waits of several seconds and charges refused by one of their two windows.
      expect(expected.flat().filter((d) => !d.allowed).length).toBeGreaterThan(20);
      expect(expected.some((d) => d.length === 2 && d[0].allowed !== d[1].allowed)).toBe(true);
      expect(expected.flat().some((d) => d.resetSeconds > 10)).toBe(true);
    }
  });

  it('the shared throttle gives the in-process throttle\'s exact answers (same random script, same fake clock)', async () => {
    for (const seed of [11, 12, 13]) {
      const net = randomInt(65_536);
      let t = 0;
      const expected = await throttleScript(createLoginThrottle({ now: () => t }), (x) => (t = x), 'p-', net, seed);
      let u = 0;
      const actual = await throttleScript(createPgLoginThrottle(pool(b), { now: () => u }), (x) => (u = x), `p-${seed}-${net}-${Date.now()}-`, net, seed);
      // The emails differ by their prefix only; the answers never name them.
      expect(actual).toEqual(expected);
      expect(expected.filter(Boolean).length).toBeGreaterThan(10);
    }
  });
});
