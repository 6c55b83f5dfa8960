// Shared setup of the browser end-to-end tests: the built web app, the real server process, Debian Chromium via playwright-core, plugin packages, screenshots.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { client, login, removeDir, ROOT, SERVER_ADMIN, startServer, type Client, type ServerProcess } from './server-process.js';

const require = createRequire(import.meta.url);

/** Debian's Chromium; E2E_CHROMIUM points elsewhere (e.g. to check the skip path). */
export const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run',
];
export const SCREENSHOTS = path.join(ROOT, 'docs', 'screenshots');
export const STRICT = process.env.TEST_STRICT === '1';

/** Why the browser tests cannot run on this machine, or null when they can. */
export function browserUnavailable(): string | null {
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} does not exist (apt-get install chromium; .ci/run does it)`;
  try {
    require.resolve('playwright-core');
  } catch {
    return 'playwright-core is not installed (npm ci)';
  }
  return null;
}

// ---- The web app must be built: npm test's pretest does it; a direct `vitest run test/e2e/...` builds here. ----

const DIST_INDEX = path.join(ROOT, 'web', 'dist', 'index.html');
// Outside the tree, one per checkout.
const LOCK = path.join(os.tmpdir(), `table-service-e2e-build-${Buffer.from(ROOT).toString('base64url').slice(-40)}.lock`);

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function buildIsCurrent(): boolean {
  if (!fs.existsSync(DIST_INDEX)) return false;
  const sources = Math.max(newestSource(path.join(ROOT, 'web', 'src')), fs.statSync(path.join(ROOT, 'web', 'index.html')).mtimeMs);
  return fs.statSync(DIST_INDEX).mtimeMs >= sources;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Builds web/dist when it is missing or older than web/src. Test files run in parallel processes, so one builds
 * under a lock directory while the others wait for it.
 */
export async function ensureWebBuilt(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!buildIsCurrent()) {
    let locked = false;
    try {
      fs.mkdirSync(LOCK);
      locked = true;
    } catch {
      // Someone else builds; a lock older than the timeout is left over from a killed run.
      try {
        if (Date.now() - fs.statSync(LOCK).mtimeMs > timeoutMs) fs.rmSync(LOCK, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
    }
    if (locked) {
      try {
        if (buildIsCurrent()) return;
        const r = spawnSync(process.execPath, [path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js'), 'build', 'web', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
        if (r.status !== 0) throw new Error(`vite build web failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
        return;
      } finally {
        fs.rmSync(LOCK, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) throw new Error('timed out waiting for another process to build web/dist');
    await sleep(250);
  }
}

// ---- One server and one browser for a test file ----

export interface E2E {
  server: ServerProcess;
  url: string;
  admin: Client;
  adminToken: string;
  context: BrowserContext;
  page: Page;
  /** Messages the page logged as errors, and uncaught page errors: shown when a test fails. */
  consoleErrors: string[];
  close(): Promise<void>;
}

export async function startE2E(opts: { env?: Record<string, string> } = {}): Promise<E2E> {
  await ensureWebBuilt();
  const server = await startServer({ env: opts.env });
  const adminToken = await login(server.url);
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ts-e2e-chromium-'));
  let context: BrowserContext;
  try {
    // A fresh user-data-dir per run: no state from any earlier browser.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1360, height: 820 },
    });
  } catch (e) {
    await server.stop();
    removeDir(profile);
    throw e;
  }
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  return {
    server, url: server.url, admin: client(server.url, adminToken), adminToken, context, page, consoleErrors,
    async close() {
      await context.close().catch(() => {});
      await server.stop();
      removeDir(profile);
      removeDir(server.dataDir);
    },
  };
}

// ---- Waiting with a message that says what is missing ----

/**
 * expect.poll with room for a loaded machine: what a page shows follows a write through the server and the page's
 * refresh, which on CI (PostgreSQL, Chromium and the server on 2 cores) took over vitest's default second.
 */
export function poll<T>(fn: () => T | Promise<T>, timeout = 10_000) {
  return expect.poll(fn, { timeout });
}

/**
 * Waits for a page element another engineer's page is meant to render; fails naming the page and the testid,
 * so a page that does not exist yet reads as such rather than as a timeout.
 */
export async function expectTestId(page: Page | Frame, testid: string, what: string, timeout = 10_000): Promise<Locator> {
  const loc = page.locator(`[data-testid="${testid}"]`).first();
  try {
    await loc.waitFor({ state: 'visible', timeout });
  } catch {
    const url = 'url' in page ? page.url() : '';
    throw new Error(`${what}: no visible [data-testid="${testid}"] at ${url} after ${timeout} ms (is that page built yet?)`);
  }
  return loc;
}

/** Signs in through the login form and waits to leave /login. */
export async function uiLogin(page: Page, baseUrl: string, email = SERVER_ADMIN.email, password = SERVER_ADMIN.password) {
  await page.goto(`${baseUrl}/login`);
  await (await expectTestId(page, 'email', 'login page')).fill(email);
  await page.locator('[data-testid="password"]').fill(password);
  await page.locator('[data-testid="sign-in"]').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

export async function screenshot(page: Page, name: string) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

// ---- Plugin packages ----

/** Zips a plugin folder (manifest.json at the root), optionally changing the manifest or adding files. */
export async function packPlugin(dir: string, opts: { manifest?: (m: any) => any; files?: Record<string, string> } = {}): Promise<Buffer> {
  const zip = new JSZip();
  const walk = (d: string, prefix: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else if (`${prefix}${entry.name}` !== 'manifest.json') zip.file(`${prefix}${entry.name}`, fs.readFileSync(full));
    }
  };
  walk(dir, '');
  let manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  if (opts.manifest) manifest = opts.manifest(manifest);
  zip.file('manifest.json', JSON.stringify(manifest, null, 2));
  for (const [name, content] of Object.entries(opts.files ?? {})) zip.file(name, content);
  return zip.generateAsync({ type: 'nodebuffer' });
}

export const EXAMPLES = path.join(ROOT, 'examples');

/** Uploads a package as an application/zip body; returns the parsed answer and status. */
export async function uploadPackage(baseUrl: string, token: string, zip: Buffer): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/api/plugins/upload`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip' }, body: new Uint8Array(zip),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Uploads, enables and (for ui plugins, when a base is given) installs a plugin; returns its id. */
export async function installPlugin(e2e: E2E, zip: Buffer, baseId?: string): Promise<string> {
  const up = await uploadPackage(e2e.url, e2e.adminToken, zip);
  if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const id = up.body.data.id as string;
  await e2e.admin.data('PUT', `/api/plugins/${id}/status`, { action: 'enable' }, 200);
  if (baseId && up.body.data.type === 'ui') await e2e.admin.data('POST', `/api/plugins/${id}/installations`, { base_id: baseId }, [200, 201]);
  return id;
}

/**
 * A describe block for browser tests. Without Chromium or playwright-core it says why in the output and skips,
 * and under TEST_STRICT=1 (CI) it fails instead: a test that cannot run must not pass quietly.
 */
export function describeE2E(name: string, body: () => void) {
  const why = browserUnavailable();
  describe(name, () => {
    if (!why) return body();
    if (STRICT) {
      it('needs Chromium and playwright-core under TEST_STRICT=1', () => {
        throw new Error(`TEST_STRICT=1 but the browser end-to-end tests cannot run: ${why}`);
      });
    } else {
      console.warn(`${name}: skipping the browser end-to-end tests: ${why}`);
      it.skip(`skipped: ${why}`, () => {});
    }
  });
}

/** The signed-in administrator's own base (every user gets one). */
export async function defaultBase(e2e: E2E): Promise<string> {
  const res = await e2e.admin.call('POST', '/graphql', { query: '{ me { defaultBaseId } }' });
  const id = res.body?.data?.me?.defaultBaseId;
  if (typeof id !== 'string') throw new Error(`no default base: ${JSON.stringify(res.body)}`);
  return id;
}
