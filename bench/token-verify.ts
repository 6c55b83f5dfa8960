// Issue 3, T3: what verifying an Open API token costs a request, measured in the bench process itself: the service is
// built in process (createApp on a temporary DATA_DIR), an application and its tokens are made through app.fetch and
// the app service, then `services.auth.actorFromHeader('Bearer ' + token)` is timed for a client that reuses its token
// and for tokens each seen once, beside a bare jose.jwtVerify of the same tokens (the signature cost).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { importJWK, jwtVerify, type JWK } from 'jose';
import { log } from './harness.js';
import { fmt, type Row } from './report.js';
import { ALL_SCOPES } from './open-api.js';

type AppModule = typeof import('../src/app.js');
type ConfigModule = typeof import('../src/config.js');

const us = (ms: number, n: number) => (ms * 1000) / n;

export async function tokenVerification(opts: { serviceDir: string; tmp: string; reuseCalls: number; distinct: number; admin: { email: string; password: string } }): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const dataDir = path.join(opts.tmp, 'inproc-data');
  fs.mkdirSync(dataDir, { recursive: true });
  // The service runs with NODE_ENV=production; so does this copy (libraries read it once, at import).
  process.env.NODE_ENV ??= 'production';
  const { createApp } = (await import(pathToFileURL(path.join(opts.serviceDir, 'src/app.ts')).href)) as AppModule;
  const { readConfig } = (await import(pathToFileURL(path.join(opts.serviceDir, 'src/config.ts')).href)) as ConfigModule;
  const config = readConfig({ DATA_DIR: dataDir, ADMIN_EMAIL: opts.admin.email, ADMIN_PASSWORD: opts.admin.password, HOST: '127.0.0.1', PORT: '8080' }, '0.0.0');
  const app = await createApp(config);
  try {
    const call = async (method: string, p: string, body?: string, headers: Record<string, string> = {}) => {
      const res = await app.fetch(new Request(`${config.publicUrl}${p}`, {
        method, body, headers: { ...(body !== undefined && !headers['content-type'] ? { 'content-type': 'application/json' } : {}), ...headers },
      }));
      const json = (await res.json()) as any;
      if (!res.ok) throw new Error(`in-process ${method} ${p} → ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
      return json;
    };
    const login = await call('POST', '/api/auth/login', JSON.stringify(opts.admin));
    const admin = { authorization: `Bearer ${login.data.token}` };
    const created = await call('POST', '/api/oauth/apps', JSON.stringify({
      app_name: 'bench-inproc', callback_url: 'https://example.com/cb', scopes: ALL_SCOPES, allowed_bases: [login.data.user.default_base_id].filter(Boolean),
      rate_limit_per_minute: 1_000_000, write_rate_limit_per_minute: 1_000_000,
    }), admin);
    const clientId = created.data.client_id as string;
    const clientSecret = created.data.client_secret as string;
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const issued = await call('POST', '/api/oauth/token', 'grant_type=client_credentials', { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' });
    const token = issued.access_token as string;
    const jwks = await call('GET', '/api/oauth/jwks.json');
    const key = await importJWK(jwks.keys[0] as JWK, 'EdDSA');
    const auth = app.services.auth;

    const actor = await auth.actorFromHeader(`Bearer ${token}`);
    if (actor?.kind !== 'app') problems.push(`T3: the token did not verify as an application token: ${JSON.stringify(actor)}`);

    // ---- a client reusing its token: the verification cache, the revocation list and the application registry ----
    log(`T3. token verification in process: ${opts.reuseCalls.toLocaleString('en-US')} calls with one token, ${opts.distinct.toLocaleString('en-US')} tokens seen once…`);
    const header = `Bearer ${token}`;
    for (let i = 0; i < Math.min(10_000, opts.reuseCalls); i++) await auth.actorFromHeader(header);
    const rounds = 5;
    const per = Math.ceil(opts.reuseCalls / rounds);
    let reuseMs = 0;
    let reuseCalls = 0;
    let sigReuseMs = 0;
    let sigReuseCalls = 0;
    const sigPer = Math.max(50, Math.ceil(per / 50));
    for (let round = 0; round < rounds; round++) {
      const t0 = performance.now();
      for (let i = 0; i < per; i++) await auth.actorFromHeader(header);
      reuseMs += performance.now() - t0;
      reuseCalls += per;
      // The same token through the bare signature check, for scale (jose keeps no cache).
      const t1 = performance.now();
      for (let i = 0; i < sigPer; i++) await jwtVerify(token, key);
      sigReuseMs += performance.now() - t1;
      sigReuseCalls += sigPer;
    }

    // ---- tokens each seen once: the signature check plus whatever the service adds on a miss ----
    const warmCount = Math.min(200, opts.distinct);
    const tokens: string[] = [];
    for (let i = 0; i < opts.distinct + warmCount; i++) {
      const t = await app.services.apps.issueToken({ grantType: 'client_credentials', clientId, clientSecret, basic: true });
      tokens.push(t.accessToken);
    }
    const warmTokens = tokens.slice(0, warmCount);
    const measured = tokens.slice(warmCount);
    for (const t of warmTokens) await jwtVerify(t, key);
    for (const t of warmTokens) await auth.actorFromHeader(`Bearer ${t}`);
    const headers = measured.map((t) => `Bearer ${t}`);
    // Each token once through the service and once through the bare signature check, interleaved call by call (the
    // order swapping every token), so drift and a noisy neighbour hit both sides alike.
    const onceCalls: number[] = [];
    const bareCalls: number[] = [];
    const bare = async (i: number) => {
      const t0 = performance.now();
      await jwtVerify(measured[i], key);
      bareCalls.push(performance.now() - t0);
    };
    const service = async (i: number) => {
      const t0 = performance.now();
      await auth.actorFromHeader(headers[i]);
      onceCalls.push(performance.now() - t0);
    };
    for (let i = 0; i < measured.length; i++) {
      if (i % 2 === 0) { await bare(i); await service(i); } else { await service(i); await bare(i); }
    }
    const onceMs = onceCalls.reduce((x, y) => x + y, 0);
    const bareMs = bareCalls.reduce((x, y) => x + y, 0);
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] * 1000;

    const reuseUs = us(reuseMs, reuseCalls);
    const sigUs = us(sigReuseMs, sigReuseCalls);
    const onceUs = us(onceMs, measured.length);
    const bareUs = us(bareMs, measured.length);
    log(`   reused token ${fmt(reuseUs)} µs/request (bare jwtVerify ${fmt(sigUs)} µs); seen once ${fmt(onceUs)} µs, median ${fmt(median(onceCalls))} µs (bare jwtVerify ${fmt(bareUs)} µs, median ${fmt(median(bareCalls))} µs)`);
    const ONCE_SLACK = 1.1;
    return {
      problems,
      rows: [
        {
          id: 'T3a', workload: `token check, client reusing its token (${reuseCalls.toLocaleString('en-US')} calls, in process)`, unit: 'µs',
          service: reuseUs, baseline: sigUs, baselineLabel: 'jwtVerify', ratio: reuseUs / sigUs, target: '<= 50 µs', pass: reuseUs <= 50,
          details: { reuse: { calls: reuseCalls, ms: reuseMs }, signature: { calls: sigReuseCalls, ms: sigReuseMs } },
        },
        {
          id: 'T3b', workload: `token check, each token seen once (${measured.length.toLocaleString('en-US')} tokens, in process)`, unit: 'µs',
          service: onceUs, baseline: bareUs, baselineLabel: 'jwtVerify', ratio: onceUs / bareUs,
          target: `<= signature (${ONCE_SLACK.toFixed(2)}x)`, pass: onceUs <= bareUs * ONCE_SLACK,
          details: {
            once: { tokens: measured.length, ms: onceMs, medianUs: median(onceCalls) },
            signature: { tokens: measured.length, ms: bareMs, medianUs: median(bareCalls) }, slack: ONCE_SLACK,
          },
        },
      ],
    };
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
