// Permission matrix over every /api/v1 and /api/auth endpoint (contract section 2):
// viewers read; editors also write records and trigger workflows; admins also change tables, fields, members and
// workflows and read run logs; owners also delete the base; the system administrator acts as owner everywhere and alone uses /api/v1/users; non-members get
// 403 on an existing base's resources and 404 for ids that do not exist; no token gives 401.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../rest-adapters/routes/index.js';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';

type ActorName = 'S' | 'O' | 'A' | 'E' | 'V' | 'N' | 'anon';
type Role = 'viewer' | 'editor' | 'admin' | 'owner';
/** The least an actor needs: a role in the fixture base, a system administrator, any signed-in user, or nothing. */
type Min = Role | 'systemAdmin' | 'loggedIn' | 'public';

const ACTORS: ActorName[] = ['S', 'O', 'A', 'E', 'V', 'N', 'anon'];
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };
const ROLE_OF: Partial<Record<ActorName, Role>> = { O: 'owner', A: 'admin', E: 'editor', V: 'viewer' };
const CODE_OF: Record<number, string> = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

let c: TestClient;
const tokens = {} as Record<ActorName, string | null>;
const ids = {} as Record<ActorName, string>;
const emails = {} as Record<ActorName, string>;
const PASSWORDS: Partial<Record<ActorName, string>> = {};
/** The shared fixture: base B owned by O with A admin, E editor, V viewer; table T with field F, record R and manual workflow W; X a spare user. */
const fx = { base: '', table: '', field: '', record: '', workflow: '', spare: '' };
let seq = 0;
const uniq = (p: string) => `${p}${++seq}${Math.random().toString(36).slice(2, 6)}`;

function expected(min: Min, actor: ActorName, ok: number): number {
  if (min === 'public') return ok;
  if (actor === 'anon') return 401;
  if (min === 'loggedIn') return ok;
  if (min === 'systemAdmin') return actor === 'S' ? ok : 403;
  if (actor === 'S') return ok; // acts as owner of every base
  const role = ROLE_OF[actor];
  if (!role) return 403; // non-member
  return RANK[role] >= RANK[min] ? ok : 403;
}

/** Asserts the exact v1 error envelope. */
function expectError(res: TestResponse, status: number) {
  expect(res.status).toBe(status);
  const { details, ...rest } = res.body ?? {};
  expect(rest).toEqual({ code: status, msg: expect.any(String), error: CODE_OF[status], data: null, request_id: res.headers.get('x-request-id') });
  if (details !== undefined) expect(details).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.any(String) })]));
  expect(res.body.msg.length).toBeGreaterThan(0);
}

async function ok(res: TestResponse, status = 200) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A base owned by O with the same members as the fixture base. */
async function freshBase(): Promise<string> {
  const base = (await ok(await c.request('POST', '/api/v1/bases', { token: tokens.O, body: { name: uniq('B') } }), 201)).id;
  for (const [who, role] of [['A', 'admin'], ['E', 'editor'], ['V', 'viewer']] as const) {
    await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${ids[who]}`, { token: tokens.O, body: { role } }));
  }
  return base;
}
const freshTable = () => makeTable(c, [{ name: 'Name', type: 'text' }], { baseId: fx.base, name: uniq('T') });
const freshField = async () => (await ok(await c.request('POST', `/api/v1/tables/${fx.table}/fields`, { body: { name: uniq('F'), type: 'text' } }), 201)).id as string;
const freshRecord = async () => (await ok(await c.request('POST', `/api/v1/tables/${fx.table}/records`, { body: { fields: { Name: uniq('r') } } }), 201)).id as string;
/** A valid definition of a manual workflow on the fixture table; its runs rename the triggering record. */
const workflowBody = (name: string) => ({
  name, table_id: fx.table, trigger: { type: 'manual', config: {} }, nodes: [{ type: 'update_record', config: { fields: { Name: '{{record.Name}} done' } } }],
});
const freshWorkflow = async () => (await ok(await c.request('POST', '/api/v1/workflows', { body: workflowBody(uniq('W')) }), 201)).id as string;
/** The run ids in the log of the fixture workflow, read by the system administrator. */
const runIds = async () => (await ok(await c.request('GET', `/api/v1/workflows/${fx.workflow}/logs?page_size=1000`))).items.map((r: any) => r.run_id) as string[];
async function freshUser(): Promise<string> {
  return (await ok(await c.request('POST', '/api/v1/users', { body: { email: `${uniq('u')}@test.local`, name: 'Spare', password: 'password-123' } }), 201)).id;
}

interface Call {
  url: string;
  body?: unknown;
  /** Overrides the actor's token (e.g. a second token for logout). */
  token?: string | null;
  /** Anything the check needs. */
  ref?: string;
}
interface Row {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The route-table path this row covers. */
  path: string;
  min: Min;
  ok: number;
  prepare: (actor: ActorName) => Promise<Call>;
  /** Runs after the call: `allowed` tells whether it should have taken effect. */
  check?: (call: Call, allowed: boolean, res: TestResponse, actor: ActorName) => Promise<void>;
}

const status = async (url: string) => (await c.request('GET', url)).status;

const ROWS: Row[] = [
  // /api/auth
  {
    method: 'POST', path: '/api/auth/login', min: 'public', ok: 200,
    prepare: async (a) => ({ url: '/api/auth/login', body: a === 'anon' ? { email: emails.V, password: PASSWORDS.V } : { email: emails[a], password: PASSWORDS[a] } }),
    check: async (_call, _allowed, res, a) => {
      expect(res.body.data).toMatchObject({ token_type: 'Bearer', user: { id: a === 'anon' ? ids.V : ids[a] } });
    },
  },
  {
    method: 'GET', path: '/api/auth/me', min: 'loggedIn', ok: 200,
    prepare: async () => ({ url: '/api/auth/me' }),
    check: async (_call, allowed, res, a) => {
      if (allowed) expect(res.body.data).toMatchObject({ id: ids[a], email: emails[a], is_admin: a === 'S' });
    },
  },
  {
    method: 'POST', path: '/api/auth/logout', min: 'loggedIn', ok: 200,
    // A second token of the same user, so the actor's main token stays valid for the other rows.
    prepare: async (a) => ({ url: '/api/auth/logout', token: a === 'anon' ? null : await c.login(emails[a], PASSWORDS[a]!) }),
    check: async (call, allowed, res) => {
      if (!allowed) return;
      expect(res.body).toEqual({ code: 0, msg: 'success', data: { logged_out: true } });
      expect((await c.request('GET', '/api/auth/me', { token: call.token })).status).toBe(401);
    },
  },
  // /api/v1/users (system administrators only)
  { method: 'GET', path: '/api/v1/users', min: 'systemAdmin', ok: 200, prepare: async () => ({ url: '/api/v1/users' }) },
  {
    method: 'POST', path: '/api/v1/users', min: 'systemAdmin', ok: 201,
    prepare: async () => {
      const email = `${uniq('new')}@test.local`;
      return { url: '/api/v1/users', body: { email, name: 'New', password: 'password-123' }, ref: email };
    },
    check: async (call, allowed) => {
      const all = (await c.request('GET', '/api/v1/users?page_size=1000')).body.data.items.map((u: any) => u.email);
      expect(all.includes(call.ref)).toBe(allowed);
    },
  },
  { method: 'GET', path: '/api/v1/users/{user_id}', min: 'systemAdmin', ok: 200, prepare: async () => ({ url: `/api/v1/users/${fx.spare}` }) },
  {
    method: 'PUT', path: '/api/v1/users/{user_id}', min: 'systemAdmin', ok: 200,
    prepare: async (a) => ({ url: `/api/v1/users/${fx.spare}`, body: { name: `Spare ${a}` }, ref: `Spare ${a}` }),
    check: async (call, allowed) => {
      expect((await c.request('GET', `/api/v1/users/${fx.spare}`)).body.data.name === call.ref).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/users/{user_id}', min: 'systemAdmin', ok: 200,
    prepare: async () => {
      const id = await freshUser();
      return { url: `/api/v1/users/${id}`, ref: id };
    },
    check: async (call, allowed) => expect(await status(`/api/v1/users/${call.ref}`)).toBe(allowed ? 404 : 200),
  },
  // /api/v1/bases
  { method: 'GET', path: '/api/v1/bases', min: 'loggedIn', ok: 200, prepare: async () => ({ url: '/api/v1/bases' }) },
  {
    method: 'POST', path: '/api/v1/bases', min: 'loggedIn', ok: 201,
    prepare: async () => ({ url: '/api/v1/bases', body: { name: uniq('Mine') } }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data.role).toBe('owner');
    },
  },
  {
    method: 'GET', path: '/api/v1/bases/{base_id}', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/bases/${fx.base}` }),
    check: async (_call, allowed, res, a) => {
      if (allowed) expect(res.body.data.role).toBe(a === 'S' ? 'owner' : ROLE_OF[a]);
    },
  },
  {
    method: 'PUT', path: '/api/v1/bases/{base_id}', min: 'admin', ok: 200,
    // Name and description together: a partial update is covered in users-bases.test.ts.
    prepare: async (a) => ({ url: `/api/v1/bases/${fx.base}`, body: { name: 'Matrix', description: `by ${a}` }, ref: `by ${a}` }),
    check: async (call, allowed) => {
      expect((await c.request('GET', `/api/v1/bases/${fx.base}`)).body.data.description === call.ref).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/bases/{base_id}', min: 'owner', ok: 200,
    prepare: async () => {
      const base = await freshBase();
      return { url: `/api/v1/bases/${base}`, ref: base };
    },
    check: async (call, allowed, res) => {
      if (allowed) expect(res.body.data).toEqual({ id: call.ref, deleted: true });
      expect(await status(`/api/v1/bases/${call.ref}`)).toBe(allowed ? 404 : 200);
    },
  },
  {
    method: 'GET', path: '/api/v1/bases/{base_id}/members', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/bases/${fx.base}/members` }),
    check: async (_call, allowed, res) => {
      if (!allowed) return;
      const roles = Object.fromEntries(res.body.data.map((m: any) => [m.user_id, m.role]));
      expect(roles).toMatchObject({ [ids.O]: 'owner', [ids.A]: 'admin', [ids.E]: 'editor', [ids.V]: 'viewer' });
    },
  },
  {
    method: 'PUT', path: '/api/v1/bases/{base_id}/members/{user_id}', min: 'admin', ok: 200,
    prepare: async () => {
      await c.request('DELETE', `/api/v1/bases/${fx.base}/members/${fx.spare}`); // 404 when not a member yet
      return { url: `/api/v1/bases/${fx.base}/members/${fx.spare}`, body: { role: 'editor' } };
    },
    check: async (_call, allowed) => {
      const members = (await c.request('GET', `/api/v1/bases/${fx.base}/members`)).body.data;
      expect(members.some((m: any) => m.user_id === fx.spare && m.role === 'editor')).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/bases/{base_id}/members/{user_id}', min: 'admin', ok: 200,
    prepare: async () => {
      await ok(await c.request('PUT', `/api/v1/bases/${fx.base}/members/${fx.spare}`, { body: { role: 'viewer' } }));
      return { url: `/api/v1/bases/${fx.base}/members/${fx.spare}` };
    },
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data).toEqual({ user_id: fx.spare, removed: true });
      const members = (await c.request('GET', `/api/v1/bases/${fx.base}/members`)).body.data;
      expect(members.some((m: any) => m.user_id === fx.spare)).toBe(!allowed);
    },
  },
  // /api/v1/tables
  {
    method: 'GET', path: '/api/v1/tables', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/tables?base_id=${fx.base}` }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data.items.map((t: any) => t.id)).toContain(fx.table);
    },
  },
  {
    // Without base_id: the tables of every base the caller can read; never someone else's.
    method: 'GET', path: '/api/v1/tables', min: 'loggedIn', ok: 200,
    prepare: async () => ({ url: '/api/v1/tables?page_size=1000' }),
    check: async (_call, allowed, res, a) => {
      if (allowed) expect(res.body.data.items.some((t: any) => t.id === fx.table)).toBe(a !== 'N');
    },
  },
  {
    method: 'POST', path: '/api/v1/tables', min: 'admin', ok: 201,
    prepare: async () => {
      const name = uniq('New');
      return { url: '/api/v1/tables', body: { base_id: fx.base, name }, ref: name };
    },
    check: async (call, allowed) => {
      const names = (await c.request('GET', `/api/v1/tables?base_id=${fx.base}&page_size=1000`)).body.data.items.map((t: any) => t.name);
      expect(names.includes(call.ref)).toBe(allowed);
    },
  },
  {
    // Without base_id the table goes to the caller's own default base, where every user is owner.
    method: 'POST', path: '/api/v1/tables', min: 'loggedIn', ok: 201,
    prepare: async () => ({ url: '/api/v1/tables', body: { name: uniq('Default') } }),
    check: async (_call, allowed, res, a) => {
      if (!allowed) return;
      const me = (await c.request('GET', `/api/v1/users/${ids[a]}`)).body.data;
      expect(res.body.data.base_id).toBe(me.default_base_id);
    },
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/tables/${fx.table}` }),
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}', min: 'admin', ok: 200,
    prepare: async (a) => ({ url: `/api/v1/tables/${fx.table}`, body: { name: 'Matrix table', description: `by ${a}` }, ref: `by ${a}` }),
    check: async (call, allowed) => {
      expect((await c.request('GET', `/api/v1/tables/${fx.table}`)).body.data.description === call.ref).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}', min: 'admin', ok: 200,
    prepare: async () => {
      const id = await freshTable();
      return { url: `/api/v1/tables/${id}`, ref: id };
    },
    check: async (call, allowed) => expect(await status(`/api/v1/tables/${call.ref}`)).toBe(allowed ? 404 : 200),
  },
  // fields
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/fields', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/tables/${fx.table}/fields` }),
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/fields', min: 'admin', ok: 201,
    prepare: async () => {
      const name = uniq('F');
      return { url: `/api/v1/tables/${fx.table}/fields`, body: { name, type: 'number' }, ref: name };
    },
    check: async (call, allowed) => {
      const names = (await c.request('GET', `/api/v1/tables/${fx.table}/fields?page_size=1000`)).body.data.items.map((f: any) => f.name);
      expect(names.includes(call.ref)).toBe(allowed);
    },
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}/fields/{field_id}', min: 'admin', ok: 200,
    prepare: async () => {
      const id = await freshField();
      return { url: `/api/v1/tables/${fx.table}/fields/${id}`, body: { name: `${id} renamed`, indexed: true }, ref: id };
    },
    check: async (call, allowed) => {
      const f = (await c.request('GET', `/api/v1/tables/${fx.table}/fields?page_size=1000`)).body.data.items.find((x: any) => x.id === call.ref);
      expect(f.name === `${call.ref} renamed`).toBe(allowed);
      expect(f.indexed).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}/fields/{field_id}', min: 'admin', ok: 200,
    prepare: async () => {
      const id = await freshField();
      return { url: `/api/v1/tables/${fx.table}/fields/${id}`, ref: id };
    },
    check: async (call, allowed) => {
      const list = (await c.request('GET', `/api/v1/tables/${fx.table}/fields?page_size=1000`)).body.data.items.map((f: any) => f.id);
      expect(list.includes(call.ref)).toBe(!allowed);
    },
  },
  // records
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/records', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/tables/${fx.table}/records` }),
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/records/{record_id}', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/tables/${fx.table}/records/${fx.record}` }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data.fields.Name).toBe('fixture');
    },
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/records', min: 'editor', ok: 201,
    prepare: async () => {
      const name = uniq('rec');
      return { url: `/api/v1/tables/${fx.table}/records`, body: { fields: { Name: name } }, ref: name };
    },
    check: async (call, allowed) => {
      const filter = encodeURIComponent(JSON.stringify({ field: 'Name', operator: 'eq', value: call.ref }));
      expect((await c.request('GET', `/api/v1/tables/${fx.table}/records?filter=${filter}`)).body.data.total).toBe(allowed ? 1 : 0);
    },
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}/records/{record_id}', min: 'editor', ok: 200,
    prepare: async (a) => {
      const id = await freshRecord();
      return { url: `/api/v1/tables/${fx.table}/records/${id}`, body: { fields: { Name: `by ${a}` } }, ref: id };
    },
    check: async (call, allowed, _res, a) => {
      const rec = (await c.request('GET', `/api/v1/tables/${fx.table}/records/${call.ref}`)).body.data;
      expect(rec.fields.Name === `by ${a}`).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}/records/{record_id}', min: 'editor', ok: 200,
    prepare: async () => {
      const id = await freshRecord();
      return { url: `/api/v1/tables/${fx.table}/records/${id}`, ref: id };
    },
    check: async (call, allowed) => expect(await status(`/api/v1/tables/${fx.table}/records/${call.ref}`)).toBe(allowed ? 404 : 200),
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/records/batch', min: 'editor', ok: 200,
    prepare: async () => {
      const id = await freshRecord();
      return { url: `/api/v1/tables/${fx.table}/records/batch`, body: { action: 'delete', records: [{ id }] }, ref: id };
    },
    check: async (call, allowed, res) => {
      if (allowed) expect(res.body.data).toEqual({ deleted: [call.ref] });
      expect(await status(`/api/v1/tables/${fx.table}/records/${call.ref}`)).toBe(allowed ? 404 : 200);
    },
  },
  // /api/v1/workflows: viewers read definitions, editors trigger runs, admins manage definitions and read run logs.
  {
    method: 'GET', path: '/api/v1/workflows', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/workflows?table_id=${fx.table}&page_size=1000` }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data.items.map((w: any) => w.id)).toContain(fx.workflow);
    },
  },
  {
    // Without table_id: the workflows of every base the caller can read; never someone else's.
    method: 'GET', path: '/api/v1/workflows', min: 'loggedIn', ok: 200,
    prepare: async () => ({ url: '/api/v1/workflows?page_size=1000' }),
    check: async (_call, allowed, res, a) => {
      if (allowed) expect(res.body.data.items.some((w: any) => w.id === fx.workflow)).toBe(a !== 'N');
    },
  },
  {
    method: 'POST', path: '/api/v1/workflows', min: 'admin', ok: 201,
    prepare: async () => {
      const name = uniq('Flow');
      return { url: '/api/v1/workflows', body: workflowBody(name), ref: name };
    },
    check: async (call, allowed, res) => {
      if (allowed) expect(res.body.data).toMatchObject({ name: call.ref, table_id: fx.table, enabled: true });
      const names = (await c.request('GET', `/api/v1/workflows?table_id=${fx.table}&page_size=1000`)).body.data.items.map((w: any) => w.name);
      expect(names.includes(call.ref)).toBe(allowed);
    },
  },
  {
    method: 'GET', path: '/api/v1/workflows/{workflow_id}', min: 'viewer', ok: 200,
    prepare: async () => ({ url: `/api/v1/workflows/${fx.workflow}` }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data).toMatchObject({ id: fx.workflow, table_id: fx.table, trigger: { type: 'manual' } });
    },
  },
  {
    method: 'PUT', path: '/api/v1/workflows/{workflow_id}', min: 'admin', ok: 200,
    prepare: async (a) => ({ url: `/api/v1/workflows/${fx.workflow}`, body: { name: `Matrix flow by ${a}` }, ref: `Matrix flow by ${a}` }),
    check: async (call, allowed) => {
      expect((await c.request('GET', `/api/v1/workflows/${fx.workflow}`)).body.data.name === call.ref).toBe(allowed);
    },
  },
  {
    method: 'DELETE', path: '/api/v1/workflows/{workflow_id}', min: 'admin', ok: 200,
    prepare: async () => {
      const id = await freshWorkflow();
      return { url: `/api/v1/workflows/${id}`, ref: id };
    },
    check: async (call, allowed, res) => {
      if (allowed) expect(res.body.data).toEqual({ id: call.ref, deleted: true });
      expect(await status(`/api/v1/workflows/${call.ref}`)).toBe(allowed ? 404 : 200);
    },
  },
  {
    method: 'POST', path: '/api/v1/workflows/{workflow_id}/trigger', min: 'editor', ok: 200,
    prepare: async () => {
      const id = await freshRecord();
      return { url: `/api/v1/workflows/${fx.workflow}/trigger`, body: { record_id: id }, ref: id };
    },
    check: async (call, allowed, res) => {
      const logged = (await ok(await c.request('GET', `/api/v1/workflows/${fx.workflow}/logs?page_size=1000`))).items;
      const mine = logged.filter((r: any) => r.trigger.record_id === call.ref);
      if (!allowed) return expect(mine).toEqual([]);
      expect(res.body.data).toEqual({ run_id: expect.stringMatching(/^run/), status: 'queued' });
      expect(mine.map((r: any) => r.run_id)).toEqual([res.body.data.run_id]);
      expect(mine[0].trigger).toEqual({ type: 'manual', record_id: call.ref });
    },
  },
  {
    method: 'GET', path: '/api/v1/workflows/{workflow_id}/logs', min: 'admin', ok: 200,
    prepare: async () => ({ url: `/api/v1/workflows/${fx.workflow}/logs?page_size=1000` }),
    check: async (_call, allowed, res) => {
      if (allowed) expect(res.body.data.items.map((r: any) => r.run_id)).toEqual(await runIds());
    },
  },
];

beforeAll(async () => {
  c = await makeApp();
  tokens.S = c.adminToken;
  tokens.anon = null;
  const me = (await c.request('GET', '/api/auth/me')).body.data;
  ids.S = me.id;
  emails.S = me.email;
  PASSWORDS.S = 'admin-password';
  for (const a of ['O', 'A', 'E', 'V', 'N'] as const) {
    const u = await c.user(a);
    tokens[a] = u.token;
    ids[a] = u.id;
    emails[a] = u.email;
    PASSWORDS[a] = 'password-123';
  }
  fx.spare = (await c.user('X')).id;
  fx.base = (await ok(await c.request('POST', '/api/v1/bases', { token: tokens.O, body: { name: 'Matrix' } }), 201)).id;
  for (const [who, role] of [['A', 'admin'], ['E', 'editor'], ['V', 'viewer']] as const) {
    await ok(await c.request('PUT', `/api/v1/bases/${fx.base}/members/${ids[who]}`, { token: tokens.O, body: { role } }));
  }
  fx.table = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId: fx.base, token: tokens.O!, name: 'Matrix table' });
  fx.field = (await c.request('GET', `/api/v1/tables/${fx.table}/fields`)).body.data.items[0].id;
  fx.record = (await ok(await c.request('POST', `/api/v1/tables/${fx.table}/records`, { token: tokens.O, body: { fields: { Name: 'fixture' } } }), 201)).id;
  fx.workflow = (await ok(await c.request('POST', '/api/v1/workflows', { token: tokens.O, body: workflowBody('Matrix flow') }), 201)).id;
});
afterAll(() => c?.close());

describe('the matrix covers the route table', () => {
  it('has a row for every auth, users, bases, tables, fields, records and workflows route', () => {
    const tags = new Set(['auth', 'users', 'bases', 'tables', 'fields', 'records', 'workflows']);
    const table = routes.filter((r) => tags.has(r.tag)).map((r) => `${r.method} ${r.path}`).sort();
    const covered = [...new Set(ROWS.map((r) => `${r.method} ${r.path}`))].sort();
    expect(covered).toEqual(table);
  });
});

for (const row of ROWS) {
  describe(`${row.method} ${row.path} (${row.min})`, () => {
    for (const actor of ACTORS) {
      const want = expected(row.min, actor, row.ok);
      it(`${actor} → ${want}`, async () => {
        const call = await row.prepare(actor);
        const token = 'token' in call ? call.token : tokens[actor];
        const res = await c.request(row.method, call.url, { token, body: call.body });
        if (want === row.ok) {
          expect(res.status, JSON.stringify(res.body)).toBe(want);
          expect(res.body).toMatchObject({ code: 0, msg: 'success' });
        } else expectError(res, want);
        await row.check?.(call, want === row.ok, res, actor);
      });
    }
  });
}

describe('ids that do not exist', () => {
  const MISSING: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/bases/bsenope'],
    ['PUT', '/api/v1/bases/bsenope', { name: 'x' }],
    ['DELETE', '/api/v1/bases/bsenope'],
    ['GET', '/api/v1/bases/bsenope/members'],
    ['GET', '/api/v1/tables?base_id=bsenope'],
    ['POST', '/api/v1/tables', { base_id: 'bsenope', name: 'x' }],
    ['GET', '/api/v1/tables/tblnope'],
    ['PUT', '/api/v1/tables/tblnope', { name: 'x' }],
    ['DELETE', '/api/v1/tables/tblnope'],
    ['GET', '/api/v1/tables/tblnope/fields'],
    ['POST', '/api/v1/tables/tblnope/fields', { name: 'x', type: 'text' }],
    ['GET', '/api/v1/tables/tblnope/records'],
    ['GET', '/api/v1/tables/tblnope/records/recnope'],
    ['POST', '/api/v1/tables/tblnope/records', { fields: {} }],
    ['POST', '/api/v1/tables/tblnope/records/batch', { action: 'delete', records: [{ id: 'recnope' }] }],
    ['GET', '/api/v1/workflows?table_id=tblnope'],
    ['POST', '/api/v1/workflows', { name: 'x', table_id: 'tblnope', trigger: { type: 'manual', config: {} } }],
  ];
  const MISSING_WORKFLOW: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/workflows/wflnope'],
    ['PUT', '/api/v1/workflows/wflnope', { name: 'x' }],
    ['DELETE', '/api/v1/workflows/wflnope'],
    ['POST', '/api/v1/workflows/wflnope/trigger', { record_id: 'recnope' }],
    ['GET', '/api/v1/workflows/wflnope/logs'],
  ];
  for (const actor of ACTORS) {
    const want = actor === 'anon' ? 401 : 404;
    it(`a missing base or table answers ${want} to ${actor}, member or not`, async () => {
      for (const [method, url, body] of MISSING) {
        const res = await c.request(method, url, { token: tokens[actor], body });
        expect(res.status, `${method} ${url}`).toBe(want);
        expectError(res, want);
      }
    });
    // Without a token the answer is 401 whether or not the id exists, so it tells nothing about which ids exist.
    it(`a missing workflow answers ${want} to ${actor}, member or not`, async () => {
      for (const [method, url, body] of MISSING_WORKFLOW) {
        const res = await c.request(method, url, { token: tokens[actor], body });
        expect(res.status, `${method} ${url}`).toBe(want);
        expectError(res, want);
      }
    });
  }

  // Inside an existing base the role check comes first: members who may act get 404, non-members 403.
  const INSIDE: Array<{ label: string; min: Role; method: string; url: () => string; body?: unknown }> = [
    { label: 'GET record', min: 'viewer', method: 'GET', url: () => `/api/v1/tables/${fx.table}/records/recnope` },
    { label: 'PUT record', min: 'editor', method: 'PUT', url: () => `/api/v1/tables/${fx.table}/records/recnope`, body: { fields: { Name: 'x' } } },
    { label: 'DELETE record', min: 'editor', method: 'DELETE', url: () => `/api/v1/tables/${fx.table}/records/recnope` },
    { label: 'PUT field', min: 'admin', method: 'PUT', url: () => `/api/v1/tables/${fx.table}/fields/fldnope`, body: { name: 'x' } },
    { label: 'DELETE field', min: 'admin', method: 'DELETE', url: () => `/api/v1/tables/${fx.table}/fields/fldnope` },
    { label: 'PUT member (no such user)', min: 'admin', method: 'PUT', url: () => `/api/v1/bases/${fx.base}/members/usrnope`, body: { role: 'viewer' } },
    { label: 'DELETE member (no such user)', min: 'admin', method: 'DELETE', url: () => `/api/v1/bases/${fx.base}/members/usrnope` },
    { label: 'trigger a workflow (no such record)', min: 'editor', method: 'POST', url: () => `/api/v1/workflows/${fx.workflow}/trigger`, body: { record_id: 'recnope' } },
  ];
  for (const row of INSIDE) {
    for (const actor of ACTORS) {
      const allowed = expected(row.min, actor, 200);
      const want = allowed === 200 ? 404 : allowed;
      it(`${row.label} with a missing id → ${want} for ${actor}`, async () => {
        const res = await c.request(row.method, row.url(), { token: tokens[actor], body: row.body });
        expectError(res, want);
      });
    }
  }

  it('the users endpoints answer 404 for a missing user id to the system administrator', async () => {
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as const) {
      expectError(await c.request(method, '/api/v1/users/usrnope', { body }), 404);
    }
  });
});

describe('tokens', () => {
  it('a malformed, foreign or garbage Authorization header is a 401 in the v1 envelope', async () => {
    for (const header of ['Basic YWRtaW46YWRtaW4=', 'Bearer', 'Bearer not.a.jwt', `Bearer ${tokens.O}x`]) {
      const res = await c.request('GET', '/api/v1/bases', { token: null, headers: { authorization: header } });
      expectError(res, 401);
    }
  });
});
