// Plugin packages (spec 3 sections 2.1-2.4 and 9, contract section 7): every refused archive and manifest rule, built in memory, and the CLI's pack/validate round trip.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkManifest, compileConfigSchema, type Problem } from '../plugins-runtime/manifest.js';
import { PackageError, readPackage } from '../plugins-runtime/package-reader.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '1.4.0';
const MiB = 1024 * 1024;

const uiManifest = (over: Record<string, unknown> = {}) => ({
  id: 'com.example.hello',
  name: 'Hello',
  version: '1.0.0',
  type: 'ui',
  apiVersion: '1',
  engines: { table: '>=1.0.0 <2.0.0' },
  entry: 'main.js',
  extensionPoints: [{ type: 'toolbar-button', title: 'Hello' }],
  ...over,
});

const scriptManifest = (over: Record<string, unknown> = {}) => ({
  id: 'com.example.batch',
  name: 'Batch',
  version: '2.1.0',
  type: 'script',
  apiVersion: '1',
  engines: { table: '^1.2.0' },
  entry: 'main.py',
  ...over,
});

type EntrySpec = string | Buffer | { data: string | Buffer; unixPermissions?: number; dir?: boolean };

/** A zip of the given entries, names exactly as given (no folder entries added), deflated. */
async function zipOf(entries: Record<string, EntrySpec>, platform: 'UNIX' | 'DOS' = 'UNIX'): Promise<Buffer> {
  const zip = new JSZip();
  for (const [name, spec] of Object.entries(entries)) {
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) zip.file(name, spec, { createFolders: false });
    else zip.file(name, spec.data, { createFolders: false, unixPermissions: spec.unixPermissions, dir: spec.dir });
  }
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', platform });
}

/** A valid ui package plus `extra` entries. */
const uiPackage = (extra: Record<string, EntrySpec> = {}, manifest: unknown = uiManifest()) =>
  zipOf({ 'manifest.json': JSON.stringify(manifest), 'main.js': 'TableSDK.ready(() => {});', ...extra });

async function problemsOf(zip: Buffer, opts: { maxBytes?: number; maxEntries?: number } = {}): Promise<Problem[]> {
  try {
    await readPackage(zip, { hostVersion: HOST, ...opts });
  } catch (error) {
    expect(error).toBeInstanceOf(PackageError);
    return (error as PackageError).problems;
  }
  throw new Error('the package was accepted');
}

/** Same problems, in any order, and no others. */
function expectProblems(actual: Problem[], expected: Problem[]) {
  const key = (p: Problem) => `${p.path}\u0000${p.message}`;
  expect(actual.map(key).sort()).toEqual(expected.map(key).sort());
}

describe('archive entries', () => {
  it('refuses zip slip through ".." segments, and does not return the entry', async () => {
    expectProblems(await problemsOf(await uiPackage({ '../evil.js': 'x', 'lib/../../up.js': 'x', 'a/..': 'x' })), [
      { path: '../evil.js', message: 'contains a ".." segment (path traversal)' },
      { path: 'lib/../../up.js', message: 'contains a ".." segment (path traversal)' },
      { path: 'a/..', message: 'contains a ".." segment (path traversal)' },
    ]);
  });

  it('refuses absolute paths', async () => {
    expectProblems(await problemsOf(await uiPackage({ '/etc/cron.d/evil': 'x', '/main.js': 'x' })), [
      { path: '/etc/cron.d/evil', message: 'is an absolute path' },
      { path: '/main.js', message: 'is an absolute path' },
    ]);
  });

  it('refuses backslashes, which Windows tools read as separators', async () => {
    expectProblems(await problemsOf(await uiPackage({ '..\\evil.js': 'x', 'lib\\util.js': 'x', '\\\\server\\share\\x': 'x' })), [
      { path: '..\\evil.js', message: 'contains a backslash; archive paths use "/"' },
      { path: 'lib\\util.js', message: 'contains a backslash; archive paths use "/"' },
      { path: '\\\\server\\share\\x', message: 'is an absolute path' },
    ]);
  });

  it('refuses Windows drive paths, with "/" or "\\" or none', async () => {
    expectProblems(await problemsOf(await uiPackage({ 'C:/Windows/evil.dll': 'x', 'c:\\evil.js': 'x', 'D:evil.js': 'x' })), [
      { path: 'C:/Windows/evil.dll', message: 'is an absolute path (Windows drive)' },
      { path: 'c:\\evil.js', message: 'is an absolute path (Windows drive)' },
      { path: 'D:evil.js', message: 'is an absolute path (Windows drive)' },
    ]);
  });

  it('refuses empty and "." segments, and control characters', async () => {
    expectProblems(await problemsOf(await uiPackage({ 'lib//x.js': 'x', './y.js': 'x', 'z.js/': 'x', 'bad\u0000.js': 'x', 'dir//': { data: '', dir: true } })), [
      { path: 'lib//x.js', message: 'contains an empty segment ("//" or a trailing "/")' },
      { path: './y.js', message: 'contains a "." segment' },
      { path: 'bad\u0000.js', message: 'contains a control character' },
      { path: 'dir//', message: 'contains an empty segment ("//" or a trailing "/")' },
    ]);
  });

  it('refuses symbolic links, on any entry', async () => {
    const zip = await uiPackage({ 'lib/secret.js': { data: '/etc/passwd', unixPermissions: 0o120777 } });
    expectProblems(await problemsOf(zip), [
      { path: 'lib/secret.js', message: 'is a symbolic link; a package may hold only regular files and directories' },
    ]);
    // The manifest itself as a link is refused, and then missing.
    const linked = await zipOf({ 'manifest.json': { data: '/etc/passwd', unixPermissions: 0o120644 }, 'main.js': 'x' });
    expectProblems(await problemsOf(linked), [
      { path: 'manifest.json', message: 'is a symbolic link; a package may hold only regular files and directories' },
      { path: 'manifest.json', message: 'is missing at the package root' },
    ]);
  });

  it('refuses a name stored twice', async () => {
    // JSZip cannot write two entries with one name, so the second name is patched in the bytes (local and central headers).
    const zip = await uiPackage({ 'lib/aaaa.js': 'first', 'lib/bbbb.js': 'second' });
    let at = 0;
    while ((at = zip.indexOf('lib/bbbb.js', at)) >= 0) zip.write('lib/aaaa.js', at, 'latin1');
    expectProblems(await problemsOf(zip), [{ path: 'lib/aaaa.js', message: 'appears more than once in the archive' }]);
  });

  it('skips directories, and reads nested files under their full path', async () => {
    const pkg = await readPackage(await uiPackage({ 'lib/': { data: '', dir: true }, 'lib/util.js': 'u' }), { hostVersion: HOST });
    expect([...pkg.files.keys()].sort()).toEqual(['lib/util.js', 'main.js', 'manifest.json']);
  });

  it('allows 2000 entries and refuses 2001, before reading any of them', async () => {
    const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`assets/f${i}.txt`, `${i}`]));
    const ok = await readPackage(await uiPackage(entries(1998)), { hostVersion: HOST });
    expect(ok.files.size).toBe(2000);
    expectProblems(await problemsOf(await uiPackage(entries(1999))), [{ path: '', message: 'has more than 2000 entries' }]);
    // Folder entries count too: they cost as much to list.
    const withDir = await uiPackage({ ...entries(1998), 'assets/': { data: '', dir: true } });
    expectProblems(await problemsOf(withDir), [{ path: '', message: 'has more than 2000 entries' }]);
  });
});

describe('zip bombs', () => {
  let bomb: Buffer;
  let liar: Buffer;

  beforeAll(async () => {
    // 110 MiB of zeros deflate to about 110 KiB.
    bomb = await uiPackage({ 'assets/zeros.bin': Buffer.alloc(110 * MiB) });
    expect(bomb.length).toBeLessThan(MiB);
    // The same archive with the declared uncompressed size of the big entry cut to 1000 bytes, in the local header
    // (offset 22) and in the central directory record (offset 24): a reader trusting them would see a small package.
    liar = Buffer.from(bomb);
    const name = Buffer.from('assets/zeros.bin');
    let patched = 0;
    for (let at = liar.indexOf(name); at >= 0; at = liar.indexOf(name, at + 1)) {
      if (liar.readUInt32LE(at - 30) === 0x04034b50) liar.writeUInt32LE(1000, at - 30 + 22);
      else if (liar.readUInt32LE(at - 46) === 0x02014b50) liar.writeUInt32LE(1000, at - 46 + 24);
      else continue;
      patched++;
    }
    expect(patched).toBe(2);
  });

  it('refuses more than 100 MiB inflated', async () => {
    expectProblems(await problemsOf(bomb), [{ path: '', message: 'inflates to more than 100 MiB' }]);
  });

  it('counts the bytes really inflated, not the sizes the archive declares', async () => {
    expectProblems(await problemsOf(liar), [{ path: '', message: 'inflates to more than 100 MiB' }]);
  });

  it('stops inflating at the cap rather than after the entry', async () => {
    const started = process.hrtime.bigint();
    expectProblems(await problemsOf(liar, { maxBytes: MiB }), [{ path: '', message: 'inflates to more than 1 MiB' }]);
    const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
    // Inflating all 110 MiB takes several hundred ms of CPU; an inflater left running would burn it here.
    const cpu = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const burnedMs = process.cpuUsage(cpu).user / 1000;
    expect(burnedMs).toBeLessThan(150);
    expect(tookMs).toBeLessThan(2000);
  });

  it('counts the total over all entries', async () => {
    const many = await uiPackage({ 'a.bin': Buffer.alloc(3 * MiB), 'b.bin': Buffer.alloc(3 * MiB) });
    expectProblems(await problemsOf(many, { maxBytes: 5 * MiB }), [{ path: '', message: 'inflates to more than 5 MiB' }]);
    expect((await readPackage(many, { hostVersion: HOST, maxBytes: 7 * MiB })).files.size).toBe(4);
  });
});

describe('manifest.json in the archive', () => {
  it('refuses something that is not a zip', async () => {
    for (const junk of [Buffer.alloc(0), Buffer.from('PK not really a zip'), Buffer.from(JSON.stringify(uiManifest()))]) {
      const problems = await problemsOf(junk);
      expect(problems).toHaveLength(1);
      expect(problems[0]!.path).toBe('');
      expect(problems[0]!.message).toMatch(/^is not a readable zip archive \(/);
    }
  });

  it('refuses a package without manifest.json at the root, and says when it sits in a folder', async () => {
    expectProblems(await problemsOf(await zipOf({ 'main.js': 'x' })), [{ path: 'manifest.json', message: 'is missing at the package root' }]);
    const nested = await zipOf({ 'hello/manifest.json': JSON.stringify(uiManifest()), 'hello/main.js': 'x' });
    expectProblems(await problemsOf(nested), [
      { path: 'manifest.json', message: "is missing at the package root (found hello/manifest.json: zip the folder's contents, not the folder)" },
    ]);
  });

  it('refuses a manifest that is not JSON, or not UTF-8', async () => {
    const bad = await zipOf({ 'manifest.json': '{"id": "com.example.x",', 'main.js': 'x' });
    const problems = await problemsOf(bad);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe('manifest.json');
    expect(problems[0]!.message).toMatch(/^is not valid JSON \(/);
    const latin1 = await zipOf({ 'manifest.json': Buffer.from([0x7b, 0xe9, 0x7d]), 'main.js': 'x' });
    expectProblems(await problemsOf(latin1), [{ path: 'manifest.json', message: 'is not UTF-8 text' }]);
  });

  it('accepts a byte-order mark before the JSON', async () => {
    const pkg = await readPackage(await uiPackage(), { hostVersion: HOST });
    expect(pkg.manifest.id).toBe('com.example.hello');
    const bom = await zipOf({ 'manifest.json': `\uFEFF${JSON.stringify(uiManifest())}`, 'main.js': 'x' });
    expect((await readPackage(bom, { hostVersion: HOST })).manifest.id).toBe('com.example.hello');
  });

  it('reports archive and manifest problems together', async () => {
    const zip = await zipOf({
      'manifest.json': JSON.stringify(uiManifest({ entry: 'app.js', extensionPoints: [{ type: 'side-panel' }] })),
      '../app.js': 'x',
      'C:/x.js': 'x',
    });
    expectProblems(await problemsOf(zip), [
      { path: '../app.js', message: 'contains a ".." segment (path traversal)' },
      { path: 'C:/x.js', message: 'is an absolute path (Windows drive)' },
      // JSZip reads "../app.js" as "app.js"; the refused entry must not count as the entry file.
      { path: 'manifest.json#/entry', message: 'names "app.js", which is not a file in the package' },
      { path: 'manifest.json#/extensionPoints/0', message: 'a side-panel needs a toolbar-button in the same manifest to open it' },
    ]);
  });
});

describe('valid packages', () => {
  it('reads back a ui package with assets, endpoints, permissions and a config schema', async () => {
    const manifest = uiManifest({
      description: 'Says hello',
      author: { name: 'Example', url: 'https://example.com', email: 'dev@example.com' },
      permissions: { records: 'write', tables: 'read', storage: true, network: ['api.example.com', '203.0.113.7', '[2001:db8::1]', '::1', 'Example.ORG.'] },
      extensionPoints: [
        { type: 'toolbar-button', title: 'Hello', icon: 'assets/icon.svg', requiresSelection: true, maxSelection: 1000 },
        { type: 'side-panel', title: 'Panel' },
        { type: 'record-detail-block', maxSelection: 1 },
        { type: 'home-menu' },
        { type: 'base-menu' },
        { type: 'dashboard-widget' },
      ],
      configSchema: { type: 'object', properties: { greeting: { type: 'string', default: 'hi' }, email: { type: 'string', format: 'email' } } },
      assets: { styles: ['assets/app.css'], scripts: ['assets/lib.js'] },
      endpoints: [{ name: 'sum-up', entry: 'backend/sum.py', description: 'Sums', timeout: 300 }, { name: 'x1', entry: 'backend/x.py', timeout: 1 }],
    });
    const files = {
      'assets/app.css': 'body{}',
      'assets/lib.js': 'var lib;',
      'assets/icon.svg': '<svg/>',
      'backend/sum.py': 'set_result(1)',
      'backend/x.py': 'pass',
    };
    const pkg = await readPackage(await uiPackage(files, manifest), { hostVersion: HOST });
    expect(pkg.manifest).toEqual(manifest);
    expect([...pkg.files.keys()].sort()).toEqual(['assets/app.css', 'assets/icon.svg', 'assets/lib.js', 'backend/sum.py', 'backend/x.py', 'main.js', 'manifest.json']);
    expect(pkg.files.get('backend/sum.py')!.toString()).toBe('set_result(1)');
    expect(compileConfigSchema(pkg.manifest.configSchema!)({ greeting: 'hey', email: 'not-an-email' })).toBe(false);
  });

  it('reads back a script package', async () => {
    const manifest = scriptManifest({ permissions: { records: 'read' }, script: { timeout: 300 }, endpoints: [{ name: 'run', entry: 'main.py' }] });
    const zip = await zipOf({ 'manifest.json': JSON.stringify(manifest), 'main.py': 'base.log("hi")\n' }, 'DOS');
    const pkg = await readPackage(zip, { hostVersion: HOST });
    expect(pkg.manifest).toEqual(manifest);
    expect([...pkg.files.keys()].sort()).toEqual(['main.py', 'manifest.json']);
    expect(pkg.files.get('main.py')!.toString()).toBe('base.log("hi")\n');
  });
});

describe('manifest rules', () => {
  const files = new Set(['main.js', 'main.py', 'ok.py', 'a.scss', 'style.css']);
  const check = (m: unknown, host = HOST) => checkManifest(m, files, host);

  it('reports every problem of a manifest at once', () => {
    const m = {
      id: 'Com.Example!',
      name: '',
      version: 'v1.0',
      type: 'ui',
      apiVersion: 1,
      engines: { table: '>=2.0.0' },
      entry: 'main.py',
      permissions: { records: 'admin', storage: false, network: ['https://api.example.com', 'example.com/x', 'ok.example.com', 'host:8080', ''], files: 'read' },
      extensionPoints: [{ type: 'side-panel', maxSelection: 0 }, { type: 'floating', requiresSelection: 'yes' }],
      assets: { styles: ['a.scss'], scripts: ['missing.js'] },
      endpoints: [{ name: 'Bad_Name', entry: 'x.js', timeout: 301 }, { name: 'ok', entry: 'ok.py' }, { name: 'ok', entry: 'ok.py', timeout: 1.5 }],
      script: { timeout: 500 },
      configSchema: { type: 'strnig' },
      homepage: 'https://example.com',
    };
    const allowedTop = 'id, name, description, author, version, type, apiVersion, engines, entry, permissions, extensionPoints, configSchema, assets, endpoints, script';
    const problems = check(m);
    expectProblems(problems.filter((p) => p.path !== 'manifest.json#/configSchema'), [
      { path: 'manifest.json#/homepage', message: `is not an allowed key (allowed: ${allowedTop})` },
      { path: 'manifest.json#/id', message: 'must be lowercase letters and digits in parts joined by "." or "-" (reverse-domain form, e.g. com.example.my-plugin)' },
      { path: 'manifest.json#/name', message: 'must not be empty' },
      { path: 'manifest.json#/version', message: 'must be a SemVer version such as 1.0.0' },
      { path: 'manifest.json#/apiVersion', message: 'must be "1"' },
      { path: 'manifest.json#/engines/table', message: "does not include this service's version 1.4.0" },
      { path: 'manifest.json#/entry', message: 'must be a .js file' },
      { path: 'manifest.json#/permissions/files', message: 'is not an allowed key (allowed: records, tables, storage, network)' },
      { path: 'manifest.json#/permissions/records', message: 'must be one of: "read", "write"' },
      { path: 'manifest.json#/permissions/storage', message: 'must be true' },
      { path: 'manifest.json#/permissions/network/0', message: 'must be a domain name or IP address without a scheme (no "https://")' },
      { path: 'manifest.json#/permissions/network/1', message: 'must be a domain name or IP address without a path' },
      { path: 'manifest.json#/permissions/network/3', message: 'must be a domain name or IP address without a port' },
      { path: 'manifest.json#/permissions/network/4', message: 'must not be empty' },
      { path: 'manifest.json#/extensionPoints/0', message: 'a side-panel needs a toolbar-button in the same manifest to open it' },
      { path: 'manifest.json#/extensionPoints/0/maxSelection', message: 'must be >= 1' },
      { path: 'manifest.json#/extensionPoints/1/type', message: 'must be one of: "toolbar-button", "side-panel", "base-menu", "record-detail-block", "home-menu", "dashboard-widget"' },
      { path: 'manifest.json#/extensionPoints/1/requiresSelection', message: 'must be a boolean' },
      { path: 'manifest.json#/assets/styles/0', message: 'must be a .css file' },
      { path: 'manifest.json#/assets/scripts/0', message: 'names "missing.js", which is not a file in the package' },
      { path: 'manifest.json#/endpoints/0/name', message: 'must start with a lowercase letter followed by lowercase letters, digits or "-"' },
      { path: 'manifest.json#/endpoints/0/entry', message: 'must be a .py file' },
      { path: 'manifest.json#/endpoints/0/entry', message: 'names "x.js", which is not a file in the package' },
      { path: 'manifest.json#/endpoints/0/timeout', message: 'must be <= 300' },
      { path: 'manifest.json#/endpoints/2/name', message: 'repeats the name of endpoints/1' },
      { path: 'manifest.json#/endpoints/2/timeout', message: 'must be an integer' },
      { path: 'manifest.json#/script', message: 'only script plugins have script settings' },
      { path: 'manifest.json#/script/timeout', message: 'must be <= 300' },
    ]);
    // ajv's own wording of the schema error follows "is not a valid JSON Schema".
    const config = problems.filter((p) => p.path === 'manifest.json#/configSchema');
    expect(config).toHaveLength(1);
    expect(config[0]!.message).toMatch(/^is not a valid JSON Schema \(2020-12\): schema is invalid: data\/type must be equal to one of the allowed values/);
  });

  it('requires id, name, version, type, apiVersion, engines.table and entry', () => {
    expectProblems(check({}), ['id', 'name', 'version', 'type', 'apiVersion', 'engines', 'entry'].map((k) => ({ path: `manifest.json#/${k}`, message: 'is required' })));
    expectProblems(check(uiManifest({ engines: {} })), [{ path: 'manifest.json#/engines/table', message: 'is required' }]);
    expectProblems(check([]), [{ path: 'manifest.json#', message: 'must be an object' }]);
    expectProblems(check('manifest'), [{ path: 'manifest.json#', message: 'must be an object' }]);
  });

  it('checks the id form and length', () => {
    expect(check(uiManifest({ id: 'com.example.my-plugin2' }))).toEqual([]);
    expect(check(uiManifest({ id: 'hello' }))).toEqual([]);
    expect(check(uiManifest({ id: `a${'.b'.repeat(49)}c` }))).toEqual([]); // 100 characters
    expectProblems(check(uiManifest({ id: `a${'.b'.repeat(50)}` })), [{ path: 'manifest.json#/id', message: 'must NOT have more than 100 characters' }]);
    for (const id of ['Com.example', 'com..example', '.com', 'com.', 'com_example', 'com example', '']) {
      expect(check(uiManifest({ id })).map((p) => p.path)).toEqual(['manifest.json#/id']);
    }
  });

  it('checks type, apiVersion and the SemVer version', () => {
    expectProblems(check(uiManifest({ type: 'widget', apiVersion: '2' })), [
      { path: 'manifest.json#/type', message: 'must be one of: "ui", "script"' },
      { path: 'manifest.json#/apiVersion', message: 'must be "1"' },
    ]);
    expect(check(uiManifest({ version: '1.0.0-beta.1+build.5' }))).toEqual([]);
    for (const version of ['1.0', 'v1.0.0', '=1.0.0', ' 1.0.0', '01.0.0', 'latest']) {
      expectProblems(check(uiManifest({ version })), [{ path: 'manifest.json#/version', message: 'must be a SemVer version such as 1.0.0' }]);
    }
  });

  it('checks engines.table as a node-semver range that includes the host version, prereleases too', () => {
    expect(check(uiManifest({ engines: { table: '>=1.0.0 <2.0.0' } }))).toEqual([]);
    expect(check(uiManifest({ engines: { table: '^1.2 || ^2' } }))).toEqual([]);
    expect(check(uiManifest({ engines: { table: '>=1.0.0' } }), '1.5.0-beta.1')).toEqual([]);
    expectProblems(check(uiManifest({ engines: { table: '^2.0.0' } })), [
      { path: 'manifest.json#/engines/table', message: "does not include this service's version 1.4.0" },
    ]);
    expectProblems(check(uiManifest({ engines: { table: 'the newest' } })), [
      { path: 'manifest.json#/engines/table', message: 'must be a node-semver range such as ">=0.1.0 <2.0.0"' },
    ]);
    expectProblems(check(uiManifest({ engines: { table: '' } })), [{ path: 'manifest.json#/engines/table', message: 'must not be empty' }]);
    expectProblems(check(uiManifest({ engines: { table: '*', node: '>=20' } })), [
      { path: 'manifest.json#/engines/node', message: 'is not an allowed key (allowed: table)' },
    ]);
  });

  it('wants a .js entry for ui plugins and a .py entry for script plugins, present in the package', () => {
    expect(check(scriptManifest())).toEqual([]);
    expectProblems(check(scriptManifest({ entry: 'main.js' })), [{ path: 'manifest.json#/entry', message: 'must be a .py file' }]);
    expectProblems(check(uiManifest({ entry: 'app.js' })), [{ path: 'manifest.json#/entry', message: 'names "app.js", which is not a file in the package' }]);
    expectProblems(check(uiManifest({ entry: './main.js' })), [{ path: 'manifest.json#/entry', message: 'names "./main.js", which is not a file in the package' }]);
  });

  it('checks description and author', () => {
    expect(check(uiManifest({ description: 'x', author: {} }))).toEqual([]);
    expectProblems(check(uiManifest({ description: 3, author: { name: 1, twitter: '@x' } })), [
      { path: 'manifest.json#/description', message: 'must be a string' },
      { path: 'manifest.json#/author/twitter', message: 'is not an allowed key (allowed: name, url, email)' },
      { path: 'manifest.json#/author/name', message: 'must be a string' },
    ]);
  });

  it('checks permissions', () => {
    expect(check(uiManifest({ permissions: {} }))).toEqual([]);
    expect(check(uiManifest({ permissions: { records: 'read', tables: 'write', storage: true, network: [] } }))).toEqual([]);
    expectProblems(check(uiManifest({ permissions: { tables: 'admin', storage: 'yes', network: 'example.com' } })), [
      { path: 'manifest.json#/permissions/tables', message: 'must be one of: "read", "write"' },
      { path: 'manifest.json#/permissions/storage', message: 'must be true' },
      { path: 'manifest.json#/permissions/network', message: 'must be an array' },
    ]);
    const network = ['http://x.com', 'x.com/api', 'x.com:443', '*.x.com', 'a b.com', 'bücher.de', '-x.com', '1.2.3', '999.1.1.1', 'x.com?q', 7];
    const problems = check(uiManifest({ permissions: { network } }));
    // One problem each (the number 7 from the schema, the rest from the domain rule).
    expect(problems.map((p) => p.path).sort()).toEqual(network.map((_, i) => `manifest.json#/permissions/network/${i}`).sort());
    expect(check(uiManifest({ permissions: { network: ['xn--bcher-kva.de', 'localhost', 'a_b.example.com', '10.0.0.1', 'fe80::1'] } }))).toEqual([]);
  });

  it('puts extension points on ui plugins only, at least one, within their ranges', () => {
    expectProblems(check(uiManifest({ extensionPoints: undefined })), [
      { path: 'manifest.json#/extensionPoints', message: 'is required for a ui plugin (at least one)' },
    ]);
    expectProblems(check(uiManifest({ extensionPoints: [] })), [
      { path: 'manifest.json#/extensionPoints', message: 'a ui plugin needs at least one extension point' },
    ]);
    expectProblems(check(scriptManifest({ extensionPoints: [{ type: 'toolbar-button' }] })), [
      { path: 'manifest.json#/extensionPoints', message: 'only ui plugins have extension points' },
    ]);
    expect(check(uiManifest({ extensionPoints: [{ type: 'home-menu', maxSelection: 1000, requiresSelection: false }] }))).toEqual([]);
    expectProblems(check(uiManifest({ extensionPoints: [{ type: 'toolbar-button', maxSelection: 1001 }, { type: 'base-menu', maxSelection: 2.5, title: 3, size: 'l' }, { title: 'x' }] })), [
      { path: 'manifest.json#/extensionPoints/0/maxSelection', message: 'must be <= 1000' },
      { path: 'manifest.json#/extensionPoints/1/maxSelection', message: 'must be an integer' },
      { path: 'manifest.json#/extensionPoints/1/title', message: 'must be a string' },
      { path: 'manifest.json#/extensionPoints/1/size', message: 'is not an allowed key (allowed: type, title, icon, requiresSelection, maxSelection)' },
      { path: 'manifest.json#/extensionPoints/2/type', message: 'is required' },
    ]);
  });

  it('pairs a side-panel with a toolbar-button; a toolbar-button may stand alone', () => {
    expect(check(uiManifest({ extensionPoints: [{ type: 'toolbar-button' }] }))).toEqual([]);
    expect(check(uiManifest({ extensionPoints: [{ type: 'side-panel' }, { type: 'toolbar-button' }] }))).toEqual([]);
    expectProblems(check(uiManifest({ extensionPoints: [{ type: 'home-menu' }, { type: 'side-panel' }, { type: 'side-panel' }] })), [
      { path: 'manifest.json#/extensionPoints/1', message: 'a side-panel needs a toolbar-button in the same manifest to open it' },
      { path: 'manifest.json#/extensionPoints/2', message: 'a side-panel needs a toolbar-button in the same manifest to open it' },
    ]);
  });

  it('checks assets: .css styles and .js scripts, present in the package', () => {
    expect(check(uiManifest({ assets: { styles: ['style.css'], scripts: ['main.js'] } }))).toEqual([]);
    expectProblems(check(uiManifest({ assets: { styles: ['main.js', 'gone.css'], scripts: ['style.css'], fonts: [] } })), [
      { path: 'manifest.json#/assets/fonts', message: 'is not an allowed key (allowed: styles, scripts)' },
      { path: 'manifest.json#/assets/styles/0', message: 'must be a .css file' },
      { path: 'manifest.json#/assets/styles/1', message: 'names "gone.css", which is not a file in the package' },
      { path: 'manifest.json#/assets/scripts/0', message: 'must be a .js file' },
    ]);
  });

  it('checks endpoints: name form and uniqueness, .py entry present, timeout 1-300', () => {
    expect(check(scriptManifest({ endpoints: [{ name: 'a', entry: 'ok.py', timeout: 1 }, { name: 'b-2', entry: 'ok.py', timeout: 300, description: 'd' }] }))).toEqual([]);
    expectProblems(check(uiManifest({ endpoints: [{ name: '2fast', entry: 'ok.py', timeout: 0 }, { entry: 'none.py' }, { name: 'a', entry: 'ok.py', url: '/x' }, { name: 'a', entry: 'ok.py' }] })), [
      { path: 'manifest.json#/endpoints/0/name', message: 'must start with a lowercase letter followed by lowercase letters, digits or "-"' },
      { path: 'manifest.json#/endpoints/0/timeout', message: 'must be >= 1' },
      { path: 'manifest.json#/endpoints/1/name', message: 'is required' },
      { path: 'manifest.json#/endpoints/1/entry', message: 'names "none.py", which is not a file in the package' },
      { path: 'manifest.json#/endpoints/2/url', message: 'is not an allowed key (allowed: name, entry, description, timeout)' },
      { path: 'manifest.json#/endpoints/3/name', message: 'repeats the name of endpoints/2' },
    ]);
  });

  it('allows script.timeout only on script plugins, above 0 and at most 300', () => {
    expect(check(scriptManifest({ script: { timeout: 0.5 } }))).toEqual([]);
    expect(check(scriptManifest({ script: { timeout: 300 } }))).toEqual([]);
    expectProblems(check(scriptManifest({ script: { timeout: 0 } })), [{ path: 'manifest.json#/script/timeout', message: 'must be > 0' }]);
    expectProblems(check(scriptManifest({ script: { timeout: '60' } })), [{ path: 'manifest.json#/script/timeout', message: 'must be a number' }]);
    expectProblems(check(uiManifest({ script: { timeout: 30 } })), [{ path: 'manifest.json#/script', message: 'only script plugins have script settings' }]);
  });

  it('compiles configSchema as a JSON Schema and reports why it does not compile', () => {
    expect(check(uiManifest({ configSchema: { type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 1 } } } }))).toEqual([]);
    const unresolved = check(uiManifest({ configSchema: { $ref: '#/$defs/missing' } }));
    expect(unresolved).toEqual([{ path: 'manifest.json#/configSchema', message: "is not a valid JSON Schema (2020-12): can't resolve reference #/$defs/missing from id #" }]);
    expectProblems(check(uiManifest({ configSchema: ['not', 'a', 'schema'] })), [{ path: 'manifest.json#/configSchema', message: 'must be an object' }]);
    // Two plugins may use one $id: each compile is independent.
    const withId = { $id: 'https://example.com/config', type: 'object' };
    expect(check(uiManifest({ configSchema: withId }))).toEqual([]);
    expect(check(uiManifest({ configSchema: withId }))).toEqual([]);
  });
});

describe('plugin validate and pack (CLI)', () => {
  let work: string;
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const writeFolder = (dir: string, files: Record<string, string>) => {
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), content);
    }
  };
  const manifest = uiManifest({
    id: 'com.example.packed',
    version: '0.3.0',
    // Any host version: the CLI checks against the service's own package.json version.
    engines: { table: '>=0.0.0' },
    assets: { styles: ['css/app.css'] },
    endpoints: [{ name: 'hello', entry: 'backend/hello.py' }],
  });

  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'plugin-pack-'));
    writeFolder(path.join(work, 'good'), {
      'manifest.json': JSON.stringify(manifest, null, 2),
      'main.js': 'TableSDK.ready(() => {});',
      'css/app.css': 'body { margin: 0 }',
      'backend/hello.py': 'set_result("hi")',
      'old-0.2.0.stplugin.zip': 'an earlier package, never packed into the new one',
    });
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('packs a folder into a package that readPackage accepts, and validates it', async () => {
    const out = path.join(work, 'out.stplugin.zip');
    const pack = spawnSync('npx', ['tsx', 'src/cli.ts', 'plugin', 'pack', path.join(work, 'good'), out], { cwd: root, encoding: 'utf8' });
    expect(pack.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(pack.status).toBe(0);
    expect(pack.stdout).toContain(`Wrote ${out}: com.example.packed 0.3.0 (ui), 4 files`);
    expect(pack.stdout).toContain('skipped old-0.2.0.stplugin.zip');

    const zip = fs.readFileSync(out);
    const { version } = await import('../src/version.js');
    const pkg = await readPackage(zip, { hostVersion: version });
    expect(pkg.manifest).toEqual(manifest);
    expect([...pkg.files.keys()].sort()).toEqual(['backend/hello.py', 'css/app.css', 'main.js', 'manifest.json']);
    expect(pkg.files.get('css/app.css')!.toString()).toBe('body { margin: 0 }');
    // manifest.json first, every entry deflated.
    const entries = Object.values((await JSZip.loadAsync(zip)).files);
    expect(entries[0]!.name).toBe('manifest.json');
    expect(zip.readUInt16LE(8)).toBe(8);

    const validate = spawnSync(tsx, ['src/cli.ts', 'plugin', 'validate', path.join(work, 'good')], { cwd: root, encoding: 'utf8' });
    expect(validate.status).toBe(0);
    expect(validate.stdout).toContain('OK: com.example.packed 0.3.0 (ui), 4 files');
  });

  it('writes <id>-<version>.stplugin.zip in the working directory by default', () => {
    const cwd = fs.mkdtempSync(path.join(work, 'cwd-'));
    const pack = spawnSync(tsx, [path.join(root, 'src/cli.ts'), 'plugin', 'pack', path.join(work, 'good')], { cwd, encoding: 'utf8' });
    expect(pack.status).toBe(0);
    expect(fs.readdirSync(cwd)).toEqual(['com.example.packed-0.3.0.stplugin.zip']);
  });

  it('prints every problem of a broken folder, exits 1 and writes nothing', () => {
    const bad = path.join(work, 'bad');
    writeFolder(bad, {
      'manifest.json': JSON.stringify(uiManifest({ id: 'Bad Id', engines: { table: '>=0.0.0' }, entry: 'missing.js', extensionPoints: [{ type: 'side-panel' }] })),
      'main.js': 'x',
    });
    fs.symlinkSync('/etc/passwd', path.join(bad, 'passwd.txt'));
    const validate = spawnSync(tsx, ['src/cli.ts', 'plugin', 'validate', bad], { cwd: root, encoding: 'utf8' });
    expect(validate.status).toBe(1);
    const lines = validate.stderr.split('\n').filter((l) => l.startsWith('  '));
    expect(lines.sort()).toEqual([
      '  manifest.json#/entry: names "missing.js", which is not a file in the package',
      '  manifest.json#/extensionPoints/0: a side-panel needs a toolbar-button in the same manifest to open it',
      '  manifest.json#/id: must be lowercase letters and digits in parts joined by "." or "-" (reverse-domain form, e.g. com.example.my-plugin)',
      '  passwd.txt: is a symbolic link; a package may hold only regular files and directories',
    ]);

    const out = path.join(work, 'bad.stplugin.zip');
    const pack = spawnSync(tsx, ['src/cli.ts', 'plugin', 'pack', bad, out], { cwd: root, encoding: 'utf8' });
    expect(pack.status).toBe(1);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('answers usage errors with exit code 2', () => {
    const r = spawnSync(tsx, ['src/cli.ts', 'plugin', 'frobnicate'], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('plugin takes "validate <dir>" or "pack <dir> [out.stplugin.zip]"');
  });
});
