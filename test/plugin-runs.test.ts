// Script plugins and custom endpoints end to end: real runs of the sandboxed Python runtime through the host API.
import fs from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient, installEnabledPlugin } from './helpers.js';

const EXAMPLES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'examples');

async function pack(example: string, patch: Record<string, unknown> = {}, files: Record<string, string> = {}): Promise<Buffer> {
  const zip = new JSZip();
  const dir = path.join(EXAMPLES, example);
  for (const f of fs.readdirSync(dir)) if (f !== 'manifest.json') zip.file(f, fs.readFileSync(path.join(dir, f)));
  for (const [name, content] of Object.entries(files)) zip.file(name, content);
  zip.file('manifest.json', JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')), ...patch }));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

let c: TestClient;
let owner: Awaited<ReturnType<TestClient['user']>>;
let viewer: Awaited<ReturnType<TestClient['user']>>;
let tableId: string;

const install = (zip: Buffer) => installEnabledPlugin(c, zip);
const run = (id: string, token: string, extra: Record<string, unknown> = {}) =>
  c.request('POST', `/api/plugins/${id}/run`, { token, body: { base_id: owner.defaultBaseId, table_id: tableId, ...extra } });

beforeAll(async () => {
  c = await makeApp();
  owner = await c.user('Owner');
  viewer = await c.user('Viewer');
  await c.request('PUT', `/api/v1/bases/${owner.defaultBaseId}/members/${viewer.id}`, { token: owner.token, body: { role: 'viewer' } });
  tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Amount', type: 'number' }], { baseId: owner.defaultBaseId, token: owner.token });
  await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, {
    token: owner.token, body: { action: 'create', records: [1, 2, 3, 4].map((n) => ({ fields: { Name: `r${n}`, Amount: n * 10 } })) },
  });
});
afterAll(() => c.close());

describe('script runs', () => {
  it('runs the example script plugin for an editor, with config, logs and result; viewers may not run it', async () => {
    const id = await install(await pack('row-stats'));
    await c.request('PUT', `/api/plugins/${id}/config?scope=global`, { body: { config: { number_field: 'Amount' } } });
    const r = await run(id, owner.token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'completed', result: { table_id: tableId, count: 4, sum: 100 }, error: null, logs: ['counted 4 records'] });
    expect(r.body.data.run_id).toMatch(/^run/);
    const denied = await run(id, viewer.token);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('PERMISSION_DENIED');
    const called = await c.request('POST', `/api/plugins/${id}/call/summary`, { token: viewer.token, body: { base_id: owner.defaultBaseId, payload: { table_id: tableId } } });
    expect(called.body.data).toEqual({ result: { table_id: tableId, count: 4 } });
    const missing = await c.request('POST', `/api/plugins/${id}/call/nope`, { token: viewer.token, body: { base_id: owner.defaultBaseId } });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('ENDPOINT_NOT_DECLARED');
    const logs = await c.request('GET', `/api/plugins/${id}/run-logs?base_id=${owner.defaultBaseId}`, { token: owner.token });
    expect(logs.body.data.total).toBe(2);
    expect(logs.body.data.items[0]).toMatchObject({ kind: 'call', endpoint: 'summary', status: 'completed', user_id: viewer.id, plugin_id: id, version: '1.0.0' });
    expect(logs.body.data.items[1]).toMatchObject({ kind: 'run', status: 'completed', logs: ['counted 4 records'], user_id: owner.id });
    expect((await c.request('GET', `/api/plugins/${id}/run-logs?base_id=${owner.defaultBaseId}`, { token: viewer.token })).status).toBe(403);
  });

  it('outcomes: error in the result, exceptions with traceback, PermissionDenied, writes as the user, print in the logs', async () => {
    const id = await install(await pack('row-stats', { id: 'com.example.outcomes', permissions: { records: 'read' } }, {
      'main.py': [
        'mode = context["params"].get("mode")',
        'print("hello from print")',
        'base.log("hello from log")',
        'if mode == "error":',
        '    set_result({"error": "the sky fell"})',
        'elif mode == "raise":',
        '    raise ValueError("bad value")',
        'elif mode == "write":',
        '    try:',
        '        base.create_record(context["table_id"], {"Name": "nope"})',
        '    except PermissionDenied as e:',
        '        result = {"denied": e.code, "text": str(e)[:17]}',
        'else:',
        '    result = {"params": context["params"], "request": request}',
      ].join('\n'),
    }));
    const ok = await run(id, owner.token, { params: { mode: 'plain', n: 1 } });
    expect(ok.body.data).toMatchObject({ status: 'completed', result: { params: { mode: 'plain', n: 1 }, request: null }, logs: ['hello from print', 'hello from log'] });
    const failed = await run(id, owner.token, { params: { mode: 'error' } });
    expect(failed.body.data).toMatchObject({ status: 'failed', error: 'the sky fell' });
    const raised = await run(id, owner.token, { params: { mode: 'raise' } });
    expect(raised.body.data.status).toBe('failed');
    expect(raised.body.data.error).toMatch(/^ValueError: bad value/);
    const logs = await c.request('GET', `/api/plugins/${id}/run-logs?base_id=${owner.defaultBaseId}&page_size=1`, { token: owner.token });
    expect(logs.body.data.items[0].traceback).toMatch(/main\.py/);
    const write = await run(id, owner.token, { params: { mode: 'write' } });
    expect(write.body.data.result).toEqual({ denied: 'PERMISSION_DENIED', text: 'PERMISSION_DENIED' });
  });

  it('timeouts: a run answers failed with TIMEOUT, a call 504; five failures in a row put the plugin in error', async () => {
    const id = await install(await pack('row-stats', { id: 'com.example.slow', script: { timeout: 1 }, endpoints: [{ name: 'summary', entry: 'summary.py', timeout: 1 }] }, {
      'main.py': 'while True:\n    pass\n',
      'summary.py': 'while True:\n    pass\n',
    }));
    const started = Date.now();
    const r = await run(id, owner.token);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('failed');
    expect(r.body.data.error).toMatch(/^TIMEOUT/);
    const call = await c.request('POST', `/api/plugins/${id}/call/summary`, { token: owner.token, body: { base_id: owner.defaultBaseId } });
    expect(call.status).toBe(504);
    expect(call.body.error).toBe('TIMEOUT');
    for (let i = 0; i < 3; i++) await run(id, owner.token);
    const plugin = await c.request('GET', `/api/plugins/${id}`);
    expect(plugin.body.data).toMatchObject({ status: 'error', consecutive_failures: 5 });
    // The plugin keeps working in error; restore resets the count.
    expect((await run(id, owner.token)).status).toBe(200);
    expect((await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'restore' } })).body.data.consecutive_failures).toBe(0);
    await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'disable' } });
    expect((await run(id, owner.token)).body.error).toBe('PLUGIN_DISABLED');
  });

  it('several runs proceed at once without blocking the server', async () => {
    const id = await install(await pack('row-stats', { id: 'com.example.parallel' }, { 'main.py': 'import time\ntime.sleep(0.5)\nset_result(1)\n' }));
    const started = Date.now();
    const pending = Array.from({ length: 4 }, () => run(id, owner.token));
    const health = await c.request('GET', '/healthz', { token: null });
    expect(health.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(400);
    const results = await Promise.all(pending);
    expect(results.every((r) => r.body.data.status === 'completed')).toBe(true);
    expect(Date.now() - started).toBeLessThan(1900);
  });

  it('the run_script workflow node runs a script plugin through the same runtime', async () => {
    const id = await install(await pack('row-stats', { id: 'com.example.wf', permissions: { records: 'write', tables: 'read' } }, {
      'main.py': 'rid = context["record_id"]\nbase.update_record(rid, {"Name": "from script " + str(context["params"]["n"])})\nset_result({"updated": rid})\n',
    }));
    const rec = (await c.request('POST', `/api/v1/tables/${tableId}/records`, { token: owner.token, body: { fields: { Name: 'before' } } })).body.data;
    const wf = (await c.request('POST', '/api/v1/workflows', {
      token: owner.token, body: { name: 'script', table_id: tableId, trigger: { type: 'manual', config: {} }, nodes: [{ id: 's', type: 'run_script', config: { plugin_id: id, params: { n: 7 } } }] },
    })).body.data;
    await c.request('POST', `/api/v1/workflows/${wf.id}/trigger`, { token: owner.token, body: { record_id: rec.id } });
    let log: any;
    for (let i = 0; i < 100; i++) {
      await c.app.runner.idle();
      log = (await c.request('GET', `/api/v1/workflows/${wf.id}/logs`, { token: owner.token })).body.data.items[0];
      if (log?.status === 'success' || log?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(log, JSON.stringify(log)).toMatchObject({ status: 'success', steps: [{ node_id: 's', status: 'success', output: { result: { updated: rec.id } } }] });
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records/${rec.id}`, { token: owner.token })).body.data.fields.Name).toBe('from script 7');
  });

  it('healthz reports whether OS isolation is active', async () => {
    const h = await c.request('GET', '/healthz', { token: null });
    expect(h.body).toMatchObject({ status: 'ok', sandbox: 'full' });
  });
});
