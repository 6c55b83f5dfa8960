// Login throttling per email and per client address, and its bounded memory that never forgets an active lockout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { createLoginThrottle, FREE_FAILURES_PER_ADDRESS, FREE_FAILURES_PER_EMAIL, throttleAddress, type LoginThrottle } from '../src/domain/auth.js';
import { makeApp, type TestClient, type TestResponse } from './helpers.js';

/** The RATE_LIMITED error check() throws, or undefined when the attempt may go ahead. */
async function refusal(t: LoginThrottle, email: string, address: string): Promise<AppError | undefined> {
  try {
    await t.check(email, address);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('RATE_LIMITED');
    return e as AppError;
  }
}

/** A clock the test moves by hand. */
function clock(start = 1_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('the throttle on its own (injected clock)', () => {
  it('locks an email after its free failures, waits exponentially, and forgets after 15 minutes', async () => {
    const c = clock();
    const t = createLoginThrottle({ now: c.now });
    for (let i = 0; i < FREE_FAILURES_PER_EMAIL; i++) {
      expect(await refusal(t, 'a@x', `10.0.0.${i}`)).toBeUndefined();
      await t.fail('a@x', `10.0.0.${i}`);
    }
    const first = await refusal(t, 'a@x', '10.0.1.1');
    expect(first?.message).toMatch(/for this email; try again in 1 s/);
    expect(await refusal(t, 'b@x', '10.0.1.1')).toBeUndefined();
    c.advance(1001);
    expect(await refusal(t, 'a@x', '10.0.1.1')).toBeUndefined();
    await t.fail('a@x', '10.0.1.1');
    expect((await refusal(t, 'a@x', '10.0.1.1'))?.message).toMatch(/in 2 s/);
    c.advance(15 * 60_000 + 1);
    expect(await refusal(t, 'a@x', '10.0.1.1')).toBeUndefined();
  });

  it('locks an address after its free failures whatever the emails; IPv6 counts per /64, mapped IPv4 as IPv4', async () => {
    const c = clock();
    const t = createLoginThrottle({ now: c.now });
    for (let i = 0; i < FREE_FAILURES_PER_ADDRESS; i++) await t.fail(`made-up-${i}@x`, i % 2 ? '203.0.113.7' : '::ffff:203.0.113.7');
    expect((await refusal(t, 'fresh@x', '203.0.113.7'))?.message).toMatch(/from this address/);
    expect(await refusal(t, 'fresh@x', '203.0.113.8')).toBeUndefined();
    for (let i = 0; i < FREE_FAILURES_PER_ADDRESS; i++) await t.fail(`v6-${i}@x`, `2001:db8:1:2::${(i + 1).toString(16)}`);
    expect((await refusal(t, 'fresh@x', '2001:db8:1:2:ffff::1'))?.message).toMatch(/from this address/);
    expect(await refusal(t, 'fresh@x', '2001:db8:1:3::1')).toBeUndefined();
    expect(throttleAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(throttleAddress('2001:DB8:1:2::5')).toBe('2001:db8:1:2::/64');
  });

  it('a success clears the email but not the address', async () => {
    const c = clock();
    const t = createLoginThrottle({ now: c.now });
    for (let i = 0; i < FREE_FAILURES_PER_ADDRESS; i++) await t.fail(i < 3 ? 'me@x' : `other-${i}@x`, '198.51.100.1');
    await t.succeed('me@x', '198.51.100.1');
    expect(await refusal(t, 'me@x', '198.51.100.2')).toBeUndefined();
    expect((await refusal(t, 'me@x', '198.51.100.1'))?.message).toMatch(/from this address/);
  });

  it('filling the maps far past capacity with made-up emails and addresses keeps every active lockout', async () => {
    const c = clock();
    const capacity = 50;
    const t = createLoginThrottle({ now: c.now, capacity });
    // One email and one address locked out first, so they are the oldest entries.
    for (let i = 0; i < FREE_FAILURES_PER_EMAIL + 3; i++) await t.fail('victim@x', `192.0.2.${i}`);
    for (let i = 0; i < FREE_FAILURES_PER_ADDRESS + 3; i++) await t.fail(`spray-${i}@x`, '198.51.100.9');
    c.advance(1000);
    // The flood the old code answered by clearing everything: many made-up keys, each under its free allowance.
    for (let i = 0; i < 100 * capacity; i++) await t.fail(`flood-${i}@x`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect((await refusal(t, 'victim@x', '203.0.113.50'))?.message).toMatch(/for this email/);
    expect((await refusal(t, 'someone@x', '198.51.100.9'))?.message).toMatch(/from this address/);
    // Flooding keys were evicted rather than piling up, so a newcomer is still tracked and can still be locked out.
    for (let i = 0; i < FREE_FAILURES_PER_EMAIL; i++) await t.fail('newcomer@x', `172.16.0.${i}`);
    expect((await refusal(t, 'newcomer@x', '172.16.1.1'))?.message).toMatch(/for this email/);
  });

  it('the default capacity is 100,000 and flooding past it does not forget a lockout (the old code cleared its map)', async () => {
    const c = clock();
    const t = createLoginThrottle({ now: c.now });
    for (let i = 0; i < FREE_FAILURES_PER_EMAIL; i++) await t.fail('victim@x', `192.0.2.${i}`);
    for (let i = 0; i <= 100_000; i++) await t.fail(`flood-${i}@x`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect((await refusal(t, 'victim@x', '203.0.113.50'))?.message).toMatch(/for this email/);
  });

  it('with every slot an active lockout, new keys share one bounded overflow count instead of going untracked', async () => {
    const c = clock();
    const capacity = 10;
    const t = createLoginThrottle({ now: c.now, capacity });
    for (let k = 0; k < capacity; k++) for (let i = 0; i < FREE_FAILURES_PER_EMAIL; i++) await t.fail(`locked-${k}@x`, `192.0.2.${k * 10 + i}`);
    // The map is full of lockouts: a new email is not added, but its failures count together with other new emails'.
    for (let i = 0; i < FREE_FAILURES_PER_EMAIL; i++) {
      expect(await refusal(t, `new-${i}@x`, `203.0.113.${i}`)).toBeUndefined();
      await t.fail(`new-${i}@x`, `203.0.113.${i}`);
    }
    expect((await refusal(t, 'yet-another@x', '203.0.113.99'))?.message).toMatch(/for this email/);
    for (let k = 0; k < capacity; k++) expect(await refusal(t, `locked-${k}@x`, '203.0.113.99')).toBeDefined();
    // Once the lockouts expire, their slots are reused and new keys are tracked one by one again.
    c.advance(15 * 60_000 + 1);
    await t.fail('later@x', '203.0.113.100');
    expect(await refusal(t, 'unrelated@x', '203.0.113.101')).toBeUndefined();
    expect(await refusal(t, 'later@x', '203.0.113.101')).toBeUndefined();
  });
});

// The contract's numbers written out (5 free failures per email, 50 per address), not the module's constants.
describe('through the API (TRUST_PROXY, X-Forwarded-For as the client address)', () => {
  let c: TestClient;
  beforeAll(async () => {
    c = await makeApp({ TRUST_PROXY: 'true' });
  });
  afterAll(() => c.close());

  // The reverse proxy appends the real peer; the app takes the last hop, so a forged first hop changes nothing.
  const login = (email: string, password: string, address: string) =>
    c.request('POST', '/api/auth/login', { token: null, body: { email, password }, headers: { 'x-forwarded-for': `6.6.6.6, ${address}` } });
  const expectLimited = (res: TestResponse, who: RegExp) => {
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 429, error: 'RATE_LIMITED', data: null });
    expect(res.body.msg).toMatch(who);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  };

  it('(a) an email is locked out after five failures, from any address; other emails are not', async () => {
    const u = await c.user('Victim');
    for (let i = 0; i < 5; i++) expect((await login(u.email, `wrong-${i}`, `198.51.100.${i + 1}`)).status).toBe(401);
    expectLimited(await login(u.email, 'password-123', '198.51.100.99'), /for this email/);
    const other = await c.user('Bystander');
    expect((await login(other.email, 'password-123', '198.51.100.99')).status).toBe(200);
  });

  it('(b) an address is locked out after many failures with different emails; another address is not', async () => {
    const u = await c.user('Neighbour');
    for (let i = 0; i < 50; i++) expect((await login(`made-up-${i}@test.local`, 'guess', '203.0.113.5')).status).toBe(401);
    expectLimited(await login('made-up-next@test.local', 'guess', '203.0.113.5'), /from this address/);
    // Even the right password waits at that address, while the same user elsewhere logs in at once.
    expectLimited(await login(u.email, 'password-123', '203.0.113.5'), /from this address/);
    expect((await login(u.email, 'password-123', '203.0.113.6')).status).toBe(200);
    expect((await login('made-up-next@test.local', 'guess', '203.0.113.6')).status).toBe(401);
  });
});
