// Workflows act as themselves: their writes carry the workflow id, and they are editors of their own base and nothing more.
import fs from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../schema/index.js';
import { pluginGateway } from '../schema/plugin-gateway.js';
import { runOperation } from '../schema/run-operation.js';
import type { Context } from '../schema/context.js';
import type { WorkflowActor } from '../src/domain/deps.js';
import { makeApp, makeTable, type TestClient, installEnabledPlugin } from './helpers.js';
import { testSql } from './database.js';

const EXAMPLES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'examples');

/** A script plugin: the row-stats example's manifest with a patch and its own main.py. */
async function pack(patch: Record<string, unknown>, main: string): Promise<Buffer> {
  const zip = new JSZip();
  const manifest = JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'row-stats', 'manifest.json'), 'utf8'));
  zip.file('manifest.json', JSON.stringify({ ...manifest, endpoints: [], ...patch }));
  zip.file('main.py', main);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

let c: TestClient;
let owner: Awaited<ReturnType<TestClient['user']>>;
let stranger: Awaited<ReturnType<TestClient['user']>>;
let ownTable: string;
let ownOther: string;
let foreignTable: string;
let foreignRecord: string;

const install = (zip: Buffer) => installEnabledPlugin(c, zip);

async function workflow(body: Record<string, unknown>) {
  const r = await c.request('POST', '/api/v1/workflows', { token: owner.token, body: { trigger: { type: 'manual', config: {} }, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data as { id: string };
}

/** Waits until the workflow has `count` finished runs; newest first. */
async function finished(workflowId: string, count = 1) {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    await c.app.runner.idle();
    const d = (await c.request('GET', `/api/v1/workflows/${workflowId}/logs?page_size=100`, { token: owner.token })).body.data;
    if (d.total >= count && d.items.every((r: any) => r.status === 'success' || r.status === 'failed')) return d.items;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`workflow ${workflowId} did not finish ${count} run(s)`);
}

async function trigger(workflowId: string, recordId: string) {
  const r = await c.request('POST', `/api/v1/workflows/${workflowId}/trigger`, { token: owner.token, body: { record_id: recordId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** Creator and last editor as GraphQL's Record shows them (the v1 record object carries neither). */
async function authors(tableId: string, id: string) {
  const r = await c.graphql('query ($t: ID!, $id: ID!) { record(tableId: $t, id: $id) { createdBy updatedBy fields } }', { t: tableId, id }, owner.token);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.record as { createdBy: string | null; updatedBy: string | null; fields: Record<string, unknown> };
}

async function newRecord(tableId: string, fields: Record<string, unknown>, token = owner.token) {
  const r = await c.request('POST', `/api/v1/tables/${tableId}/records`, { token, body: { fields } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id as string;
}

beforeAll(async () => {
  c = await makeApp();
  owner = await c.user('Owner');
  stranger = await c.user('Stranger');
  ownTable = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Note', type: 'text' }], { baseId: owner.defaultBaseId, token: owner.token });
  ownOther = await makeTable(c, [{ name: 'Label', type: 'text' }, { name: 'Seen', type: 'checkbox' }], { baseId: owner.defaultBaseId, token: owner.token });
  foreignTable = await makeTable(c, [{ name: 'Secret', type: 'text' }], { baseId: stranger.defaultBaseId, token: stranger.token });
  foreignRecord = await newRecord(foreignTable, { Secret: 'not for that workflow' }, stranger.token);
});
afterAll(() => c.close());

describe('workflow writes carry the workflow as creator or last editor', () => {
  it('update_record and create_record steps write as the workflow; a chained workflow writes as itself; people as themselves', async () => {
    const wf = await workflow({
      name: 'writer', table_id: ownTable,
      nodes: [
        { id: 'u', type: 'update_record', config: { fields: { Note: 'touched by the workflow' } } },
        { id: 'c', type: 'create_record', config: { table_id: ownOther, fields: { Label: '{{record.Name}}' } } },
      ],
    });
    // A change made by a workflow step still triggers workflows (chains up to depth 5 as before).
    const chained = await workflow({
      name: 'marker', table_id: ownOther, trigger: { type: 'record_created', config: {} },
      nodes: [{ id: 'm', type: 'update_record', config: { fields: { Seen: true } } }],
    });
    const rec = await newRecord(ownTable, { Name: 'alpha' });
    expect(await authors(ownTable, rec)).toMatchObject({ createdBy: owner.id, updatedBy: owner.id });

    await trigger(wf.id, rec);
    const [run] = await finished(wf.id);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'success' });
    expect(await authors(ownTable, rec)).toMatchObject({ createdBy: owner.id, updatedBy: wf.id, fields: { Note: 'touched by the workflow' } });

    const createdId = run.steps[1].output.id as string;
    const [chainRun] = await finished(chained.id);
    expect(chainRun).toMatchObject({ status: 'success', depth: 1, trigger: { type: 'record_created', record_id: createdId } });
    expect(await authors(ownOther, createdId)).toMatchObject({ createdBy: wf.id, updatedBy: chained.id, fields: { Label: 'alpha', Seen: true } });

    // A person's write still records the person.
    await c.request('PUT', `/api/v1/tables/${ownTable}/records/${rec}`, { token: owner.token, body: { fields: { Note: 'by hand' } } });
    expect(await authors(ownTable, rec)).toMatchObject({ createdBy: owner.id, updatedBy: owner.id });
  });

  it('a create_record step aimed at another base fails at run time and writes nothing there', async () => {
    const wf = await workflow({ name: 'stray', table_id: ownTable, nodes: [{ id: 'c', type: 'create_record', config: { table_id: ownOther, fields: { Label: 'x' } } }] });
    // Saving refuses a table of another base, so the definition is changed underneath, as a stale or forged one would be.
    await testSql(c.app).run('UPDATE workflows SET nodes = ? WHERE id = ?',
      [JSON.stringify([{ id: 'c', type: 'create_record', config: { table_id: foreignTable, fields: { Secret: 'planted' } } }]), wf.id]);
    await trigger(wf.id, await newRecord(ownTable, { Name: 'beta' }));
    const [run] = await finished(wf.id);
    expect(run).toMatchObject({ status: 'failed', steps: [{ node_id: 'c', status: 'failed' }] });
    expect(run.steps[0].error).toMatch(/not a table of this workflow's base/);
    const foreign = await c.request('GET', `/api/v1/tables/${foreignTable}/records`, { token: stranger.token });
    expect(foreign.body.data.items.map((r: any) => r.fields.Secret)).toEqual(['not for that workflow']);
  });
});

describe('a workflow is an editor of its own base and nothing more', () => {
  it('roleIn: editor of the base of its table, a stranger to every other base', async () => {
    const actor: WorkflowActor = { kind: 'workflow', id: 'wflexample', baseId: owner.defaultBaseId, isAdmin: false };
    expect(await c.app.services.access.roleIn(actor, owner.defaultBaseId)).toBe('editor');
    expect(await c.app.services.access.roleIn(actor, stranger.defaultBaseId)).toBeNull();
  });

  it("the plugin gateway checks a workflow's data calls by scope: its own base works, another base and higher powers are refused", async () => {
    const wf = await workflow({ name: 'gateway', table_id: ownTable, nodes: [] });
    const actor: WorkflowActor = { kind: 'workflow', id: wf.id, baseId: owner.defaultBaseId, isAdmin: false };
    const ctx: Context = { actor, services: c.app.services, requestId: 'test-workflow', clientAddress: 'workflow' };
    const gateway = pluginGateway(schema, ctx);

    expect((await gateway.listTables(owner.defaultBaseId)).map((t: any) => t.id)).toEqual(expect.arrayContaining([ownTable, ownOther]));
    expect(((await gateway.getRecords(ownTable, { page: 1, perPage: 100 })) as { total: number }).total).toBeGreaterThan(0);
    const made = (await gateway.createRecord(ownTable, { Name: 'through the gateway' })) as { id: string };
    expect(await authors(ownTable, made.id)).toMatchObject({ createdBy: wf.id, updatedBy: wf.id });

    const refused = { code: 'FORBIDDEN' };
    await expect(gateway.listTables(stranger.defaultBaseId)).rejects.toMatchObject(refused);
    await expect(gateway.getRecords(foreignTable, { page: 1, perPage: 10 })).rejects.toMatchObject(refused);
    await expect(gateway.getRecord(foreignTable, foreignRecord)).rejects.toMatchObject(refused);
    await expect(gateway.createRecord(foreignTable, { Secret: 'planted' })).rejects.toMatchObject(refused);

    const beyondEditor: Array<[string, Record<string, unknown>]> = [
      ['mutation ($b: ID!) { createTable(baseId: $b, name: "wf table") { id } }', { b: owner.defaultBaseId }], // base admin
      ['mutation ($t: ID!) { createField(tableId: $t, input: { name: "X", type: "text" }) { id } }', { t: ownTable }], // base admin
      ['mutation ($b: ID!) { updateBase(id: $b, name: "renamed") { id } }', { b: owner.defaultBaseId }], // base admin
      ['mutation ($b: ID!, $u: ID!) { setMember(baseId: $b, userId: $u, role: "owner") { userId } }', { b: owner.defaultBaseId, u: stranger.id }], // members
      ['mutation ($id: ID!) { updateWorkflow(id: $id, input: { enabled: false }) { id } }', { id: wf.id }], // base admin
      ['query { me { id } }', {}], // loggedIn
      ['query { bases { total } }', {}], // loggedIn
      ['query { users { total } }', {}], // systemAdmin: user management
      ['mutation { createUser(input: { email: "wf@test.local", name: "wf", password: "password-123" }) { id } }', {}],
      ['query { plugins { id } }', {}], // loggedIn without a base
      ['mutation { setPluginStatus(id: "com.example.none", action: "disable") { id } }', {}], // plugin administration
    ];
    for (const [doc, vars] of beyondEditor) {
      await expect(runOperation(schema, ctx, doc, vars), doc).rejects.toMatchObject(refused);
    }
    expect((await c.request('GET', `/api/v1/bases/${owner.defaultBaseId}`, { token: owner.token })).body.data.name).not.toBe('renamed');
  });
});

describe('run_script steps run as the workflow', () => {
  it('a script reads and writes its own base as the workflow and cannot read a table of another base', async () => {
    const pluginId = await install(await pack({ id: 'com.example.wf-actor', permissions: { records: 'write', tables: 'read' } }, [
      'p = context["params"]',
      'if p["mode"] == "own":',
      '    page = base.list_records(context["table_id"], 1, 100)',
      '    made = base.create_record(context["table_id"], {"Name": "made by script"})',
      '    set_result({"count": page["total"], "made": made["id"], "tables": len(base.list_tables())})',
      'else:',
      '    outcome = {}',
      '    try:',
      '        outcome["rows"] = base.list_records(p["table"], 1, 100)["items"]',
      '    except PluginError as e:',
      '        outcome["list"] = e.code',
      '    try:',
      '        outcome["row"] = base.get_record(p["record"])',
      '    except PluginError as e:',
      '        outcome["get"] = e.code',
      '    set_result(outcome)',
    ].join('\n')));
    const rec = await newRecord(ownTable, { Name: 'gamma' });

    const own = await workflow({ name: 'own base', table_id: ownTable, nodes: [{ id: 's', type: 'run_script', config: { plugin_id: pluginId, params: { mode: 'own' } } }] });
    await trigger(own.id, rec);
    const [ownRun] = await finished(own.id);
    expect(ownRun, JSON.stringify(ownRun)).toMatchObject({ status: 'success', steps: [{ node_id: 's', status: 'success' }] });
    const result = ownRun.steps[0].output.result;
    expect(result.count).toBeGreaterThan(0);
    expect(result.tables).toBe(2);
    expect(await authors(ownTable, result.made)).toMatchObject({ createdBy: own.id, updatedBy: own.id });

    const foreign = await workflow({
      name: 'other base', table_id: ownTable,
      nodes: [{ id: 's', type: 'run_script', config: { plugin_id: pluginId, params: { mode: 'foreign', table: foreignTable, record: foreignRecord } } }],
    });
    await trigger(foreign.id, rec);
    const [foreignRun] = await finished(foreign.id);
    expect(foreignRun, JSON.stringify(foreignRun)).toMatchObject({ status: 'success' });
    // Another base's table and record are never read. The script API answers NOT_FOUND (a plugin's calls name tables
    // and records of the run's base only); the scope check below it refuses as well (the gateway test above).
    expect(foreignRun.steps[0].output.result).toEqual({ list: 'NOT_FOUND', get: 'NOT_FOUND' });

    // The run log names the workflow as the one who ran the script (user_id holds the acting id).
    const logs = await c.request('GET', `/api/plugins/${pluginId}/run-logs?base_id=${owner.defaultBaseId}`, { token: owner.token });
    expect(logs.body.data.items.map((r: any) => [r.user_id, r.base_id, r.kind])).toEqual([
      [foreign.id, owner.defaultBaseId, 'run'],
      [own.id, owner.defaultBaseId, 'run'],
    ]);
  });
});
