// The outbound HTTP guard shared by workflow http_request and the plugin proxy: address classes, URL forms, redirects,
// the per-request host allow-list on every hop.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedError, checkUrl, createGuardedFetch, isPrivateAddress, TooLargeError, UpstreamTimeoutError, type LookupAll } from '../src/net/ssrf-guard.js';
import { hostAllowed } from '../src/domain/plugins/index.js';

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/to-private') return void res.writeHead(302, { location: `http://10.0.0.1:${port}/` }).end();
    if (req.url === '/to-self') return void res.writeHead(301, { location: '/ok' }).end();
    if (req.url === '/to-outside') return void res.writeHead(302, { location: 'http://not-allowed.example/' }).end();
    if (req.url === '/to-outside-ip') return void res.writeHead(307, { location: 'http://93.184.216.34/' }).end();
    if (req.url === '/to-inside') return void res.writeHead(302, { location: `http://allowed.test:${port}/landed` }).end();
    if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (req.url === '/to-same-origin') return void res.writeHead(302, { location: '/echo-credentials' }).end();
    if (req.url === '/to-other-origin') return void res.writeHead(307, { location: `http://other.test:${port}/echo-credentials` }).end();
    if (req.url === '/echo-credentials') return void res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null, other: req.headers['x-other'] ?? null }));
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000);
    if (req.url === '/big') return void res.end(Buffer.alloc(50_000));
    res.end(`ok ${req.method}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => void server.close());

describe('address classes', () => {
  it.each([
    '127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '192.0.2.1',
    '198.18.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
    '::ffff:10.0.0.1', '2001:db8::1', 'not-an-ip',
  ])('%s is refused', (a) => expect(isPrivateAddress(a)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (a) => expect(isPrivateAddress(a)).toBe(false));
});

describe('URL forms', () => {
  it('canonicalises decimal, octal and hex IPv4 hosts before checking', () => {
    expect(checkUrl('http://2130706433/').hostname).toBe('127.0.0.1');
    expect(checkUrl('http://0177.0.0.1/').hostname).toBe('127.0.0.1');
    expect(checkUrl('http://0x7f.1/').hostname).toBe('127.0.0.1');
    expect(checkUrl('http://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
  });
  it('refuses other schemes and credentials', () => {
    expect(() => checkUrl('file:///etc/passwd')).toThrow(BlockedError);
    expect(() => checkUrl('gopher://x/')).toThrow(BlockedError);
    expect(() => checkUrl('http://user:pw@example.com/')).toThrow(BlockedError);
  });
  it('matches allow-list entries exactly or as a subdomain, on the canonical host', () => {
    expect(hostAllowed('api.example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('notexample.com', ['example.com'])).toBe(false);
    expect(hostAllowed('example.com.evil.net', ['example.com'])).toBe(false);
    expect(hostAllowed(new URL('http://2130706433/').hostname, ['127.0.0.1'])).toBe(true);
    expect(hostAllowed('EXAMPLE.com', ['example.COM.'])).toBe(true);
  });
});

describe('guarded fetch', () => {
  const guarded = () => createGuardedFetch({ allowPrivate: [`127.0.0.1:${port}`, `localhost:${port}`], timeoutMs: 500, maxBytes: 10_000 });
  it('refuses private targets in every written form unless exempted for tests', async () => {
    const strict = createGuardedFetch({ timeoutMs: 500 });
    for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://2130706433:${port}/`, `http://0177.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, 'http://[::1]/']) {
      await expect(strict({ url }), url).rejects.toBeInstanceOf(BlockedError);
    }
    expect((await guarded()({ url: `http://127.0.0.1:${port}/` })).body.toString()).toBe('ok GET');
    expect((await guarded()({ url: `http://localhost:${port}/` })).body.toString()).toBe('ok GET');
  });
  it('checks every redirect hop, follows at most 5, and caps time and size', async () => {
    await expect(guarded()({ url: `http://127.0.0.1:${port}/to-private` })).rejects.toBeInstanceOf(BlockedError);
    expect((await guarded()({ url: `http://127.0.0.1:${port}/to-self`, method: 'POST', body: 'x' })).body.toString()).toBe('ok GET');
    await expect(guarded()({ url: `http://127.0.0.1:${port}/loop` })).rejects.toThrow(/redirects/);
    await expect(guarded()({ url: `http://127.0.0.1:${port}/slow` })).rejects.toBeInstanceOf(UpstreamTimeoutError);
    await expect(guarded()({ url: `http://127.0.0.1:${port}/big` })).rejects.toBeInstanceOf(TooLargeError);
  });
});

describe('host allow-list on every hop', () => {
  /**
   * A lookup that knows only allowed.test (as 127.0.0.1) and records every name it is asked about. A kept-alive
   * socket to allowed.test may be reused without a lookup, so the tests only assert which names were never asked.
   */
  function fakeDns() {
    const asked: string[] = [];
    const lookup: LookupAll = (hostname, _options, callback) => {
      asked.push(hostname);
      if (hostname === 'allowed.test') return callback(null, [{ address: '127.0.0.1', family: 4 }]);
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      callback(err, []);
    };
    return { asked, guarded: createGuardedFetch({ allowPrivate: [`allowed.test:${port}`], timeoutMs: 1000, lookup }) };
  }
  const onlyAllowed = (host: string) => host === 'allowed.test';

  it('refuses a redirect hop outside the allow-list before resolving its name', async () => {
    const { asked, guarded } = fakeDns();
    const err = await guarded({ url: `http://allowed.test:${port}/to-outside`, allowHost: onlyAllowed }).catch((e) => e);
    expect(err).toBeInstanceOf(BlockedError);
    expect(err.message).toMatch(/not-allowed\.example/);
    expect(asked).not.toContain('not-allowed.example');
  });

  it('refuses an IP-literal hop outside the allow-list, and the first URL too', async () => {
    const { asked, guarded } = fakeDns();
    await expect(guarded({ url: `http://allowed.test:${port}/to-outside-ip`, method: 'POST', body: 'x', allowHost: onlyAllowed })).rejects.toThrow(/93\.184\.216\.34/);
    await expect(guarded({ url: 'http://not-allowed.example/', allowHost: onlyAllowed })).rejects.toBeInstanceOf(BlockedError);
    expect(asked).not.toContain('not-allowed.example');
  });

  it('follows redirects that stay inside the allow-list, and asks about canonical hosts', async () => {
    const { guarded } = fakeDns();
    const seen: string[] = [];
    const answer = await guarded({ url: `http://ALLOWED.test:${port}/to-inside`, allowHost: (h) => (seen.push(h), onlyAllowed(h)) });
    expect(answer.body.toString()).toBe('ok GET');
    expect(answer.url).toBe(`http://allowed.test:${port}/landed`);
    expect(seen).toEqual(['allowed.test', 'allowed.test']);
  });

  it('without allowHost a redirect to another name is followed as far as DNS (the behaviour the option closes)', async () => {
    const { asked, guarded } = fakeDns();
    await expect(guarded({ url: `http://allowed.test:${port}/to-outside` })).rejects.toThrow(/ENOTFOUND/);
    expect(asked).toContain('not-allowed.example');
  });
});

describe('credentials on redirects', () => {
  const lookup: LookupAll = (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
  const guard = () => createGuardedFetch({ allowPrivate: [`first.test:${port}`, `other.test:${port}`], timeoutMs: 1000, lookup });
  const headers = { authorization: 'Bearer secret-token', cookie: 'session=1', 'x-other': 'kept' };

  it('keeps them on a same-origin redirect and drops them on a redirect to another origin', async () => {
    const same = await guard()({ url: `http://first.test:${port}/to-same-origin`, headers });
    expect(JSON.parse(same.body.toString())).toEqual({ authorization: 'Bearer secret-token', cookie: 'session=1', other: 'kept' });
    const other = await guard()({ url: `http://first.test:${port}/to-other-origin`, headers });
    expect(JSON.parse(other.body.toString())).toEqual({ authorization: null, cookie: null, other: 'kept' });
  });
});
