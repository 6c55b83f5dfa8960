// Contract checks that need no HTTP traffic (the printed schema, the route table, the field-type registry,
// the error codes) and the /graphql side of contract section 8: errors carry extensions.code and
// extensions.http.status, and REST and GraphQL give the same data for the same operation.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../schema/index.js';
import { printedSchema, SCHEMA_FILE } from '../schema/print.js';
import { compileRoutes } from '../rest-adapters/adapter.js';
import { openApiRoutes, routes, v1Routes } from '../rest-adapters/routes/index.js';
import { openSchemas, v1Schemas } from '../rest-adapters/schemas.js';
import type { Route, RouteRequest } from '../rest-adapters/route.js';
import { FIELD_TYPE_NAMES, OPERATORS, type FieldTypeName, type Operator } from '../src/fields/field-type.js';
import { FIELD_TYPES, isFieldTypeName, typeOfField } from '../src/fields/registry.js';
import { AppError, STATUS_OF, type ErrorCode } from '../src/errors.js';
import { makeApp, makeTable, type TestClient } from './helpers.js';

// ajv-formats is CommonJS with a `default` property; take the plugin whichever way the loader hands it over.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats: FormatsPlugin =
  ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin));

const here = path.dirname(fileURLToPath(import.meta.url));

/** Zips a folder of examples/ into a .stplugin.zip, with manifest keys replaced by `patch`. */
async function pack(example: string, patch: Record<string, unknown> = {}): Promise<Buffer> {
  const zip = new JSZip();
  const dir = path.resolve(here, '../examples', example);
  for (const f of fs.readdirSync(dir)) if (f !== 'manifest.json') zip.file(f, fs.readFileSync(path.join(dir, f)));
  zip.file('manifest.json', JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')), ...patch }));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

describe('the printed GraphQL schema', () => {
  it('is checked in as schema/schema.graphql and has not drifted', () => {
    expect(path.resolve(SCHEMA_FILE)).toBe(path.resolve(here, '../schema/schema.graphql'));
    const checkedIn = fs.readFileSync(SCHEMA_FILE, 'utf8');
    expect(printedSchema(), 'schema/schema.graphql is out of date: run `npm run schema:print` and commit the result').toBe(checkedIn);
  });
});

describe('the REST route table', () => {
  /** Calls a route's variables() with proxies that record which params, query keys and body keys it reads. */
  function sampleVariables(route: Route) {
    const read = { params: new Set<string>(), query: new Set<string>(), body: new Set<string>() };
    const recorder = (kind: keyof typeof read) =>
      new Proxy({} as Record<string, any>, {
        get(_t, key) {
          if (typeof key === 'string') read[kind].add(key);
          return typeof key === 'string' ? `${kind}:${key}` : undefined;
        },
      });
    // Built and cast rather than typed, so the test compiles whether or not RouteRequest carries `headers`.
    const req = { params: recorder('params'), query: recorder('query'), body: recorder('body'), headers: new Headers() } as RouteRequest;
    return { variables: route.variables(req), read };
  }

  it('has one entry per method and path', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('every GraphQL document parses and validates against the schema', () => {
    const compiled = compileRoutes(schema, routes);
    expect(compiled.map((c) => `${c.route.method} ${c.route.path}`)).toEqual(routes.map((r) => `${r.method} ${r.path}`));
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      const document = parse(route.document);
      expect(validate(schema, document).map((e) => e.message), where).toEqual([]);
      const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      expect(operations.length, `${where}: one operation per document`).toBe(1);
      expect(operations[0].operation, where).toBe(route.method === 'GET' ? 'query' : 'mutation');
    }
  });

  it('compileRoutes names the route whose document does not validate', () => {
    const broken: Route = { ...routes[0], method: 'GET', path: '/api/v1/broken', document: 'query Broken { noSuchField }' };
    expect(() => compileRoutes(schema, [broken])).toThrow('Route GET /api/v1/broken: Cannot query field "noSuchField" on type "Query".');
  });

  it('is the v1 routes followed by the open-family routes', () => {
    expect(routes).toEqual([...v1Routes, ...openApiRoutes]);
    expect(v1Routes.length).toBeGreaterThan(0);
    expect(routes.filter((r) => r.family === 'v1')).toEqual(v1Routes);
  });

  it('every v1 route lives under /api/v1, /api/auth or /api/plugins; every other route where src/app.ts sends its family', () => {
    // src/app.ts sends /api/v1/..., /api/auth/... and /api/plugins (the list itself and everything below it) to the v1 family.
    for (const route of v1Routes) expect(route.path, `${route.method} ${route.path}`).toMatch(/^\/api\/((v1|auth|share)\/|plugins(\/|$))/);
    expect(v1Routes.filter((r) => r.path === '/api/plugins' || r.path.startsWith('/api/plugins/')).every((r) => r.tag === 'plugins')).toBe(true);
    for (const route of openApiRoutes) {
      const where = `${route.method} ${route.path}`;
      if (route.path === '/api/oauth/token') expect(route.family, where).toBe('token');
      else {
        expect(route.path, where).toMatch(/^\/(api\/open\/v1|api\/oauth|\.well-known)\//);
        expect(['open', 'raw'], where).toContain(route.family);
      }
    }
  });

  it('every route has a summary, a tag and a path matching its params', () => {
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      expect(route.path, where).toMatch(/^(\/([a-z.][a-z0-9_.-]*|\{[a-z][a-z0-9_]*\}))+$/);
      expect(['GET', 'POST', 'PUT', 'DELETE'], where).toContain(route.method);
      expect(typeof route.summary === 'string' && route.summary.trim().length > 0, `${where}: summary`).toBe(true);
      expect(typeof route.tag === 'string' && route.tag.length > 0, `${where}: tag`).toBe(true);
      // 202: an import answers its job (contract section 15).
      if (route.status !== undefined) expect([200, 201, 202], where).toContain(route.status);

      const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(new Set(pathParams).size, `${where}: repeated path parameter`).toBe(pathParams.length);
      const { variables, read } = sampleVariables(route);
      // The path names exactly the parameters the operation reads, and each lands in a variable.
      expect([...read.params].sort(), `${where}: path parameters read by variables()`).toEqual([...pathParams].sort());
      for (const p of pathParams) expect(Object.values(variables), `${where}: {${p}} reaches a variable`).toContain(`params:${p}`);
      expect([...read.query].filter((k) => !Object.keys(route.query ?? {}).includes(k)), `${where}: query keys read but not declared`).toEqual([]);
      // An upload route has no JSON body schema: the adapter puts the package (a Buffer) in body.file, and nothing else.
      // A spooled body (imports, attachments) is the file: its id, name, hash and claimed type, and the options part.
      const bodyKeys = route.bodyFormat === 'upload' ? ['file'] : route.bodyFormat === 'spool' ? ['upload', 'fileName', 'sha256', 'mimeType', 'options'] : Object.keys((route.body?.properties as Record<string, unknown> | undefined) ?? {});
      expect([...read.body].filter((k) => !bodyKeys.includes(k)), `${where}: body keys read but not in the body schema`).toEqual([]);
      if (route.body) expect(route.method === 'POST' || route.method === 'PUT', `${where}: a body on ${route.method}`).toBe(true);
      if (route.bodyFormat === 'upload') {
        expect(route.method, `${where}: an upload on ${route.method}`).toBe('POST');
        expect(route.body, `${where}: an upload route has no JSON body schema`).toBeUndefined();
        expect([...read.body], `${where}: an upload route reads body.file`).toEqual(['file']);
      }

      // variables() fills exactly the variables the document declares.
      const operation = parse(route.document).definitions[0] as OperationDefinitionNode;
      const declared = (operation.variableDefinitions ?? []).map((v) => v.variable.name.value).sort();
      expect(Object.keys(variables).sort(), `${where}: variables() against the document's variables`).toEqual(declared);
    }
  });

  it('every route has a response schema and a body schema that compile, with refs to the components of its document', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const V1 = 'https://table-service.test/v1';
    const OPEN = 'https://table-service.test/open';
    ajv.addSchema({ $id: V1, components: { schemas: v1Schemas } });
    ajv.addSchema({ $id: OPEN, components: { schemas: openSchemas } });
    const rebase = (s: unknown, id: string): unknown =>
      Array.isArray(s) ? s.map((x) => rebase(x, id))
        : s && typeof s === 'object'
          ? Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? `${id}${v}` : rebase(v, id)]))
          : s;
    for (const route of routes) {
      const id = route.family === 'v1' ? V1 : OPEN;
      const where = `${route.method} ${route.path}`;
      expect(route.response && typeof route.response === 'object' && Object.keys(route.response).length > 0, `${where}: response schema`).toBe(true);
      expect(() => ajv.compile(rebase(route.response, id) as object), where).not.toThrow();
      if (route.body) {
        expect(route.body.type, where).toBe('object');
        // v1 bodies refuse unknown keys; the token endpoint ignores them as RFC 6749 section 3.2 requires.
        if (route.family === 'v1') expect(route.body.additionalProperties, `${where}: unknown body keys are refused`).toBe(false);
        expect(() => ajv.compile(route.body!), where).not.toThrow();
      }
    }
    for (const [name, s] of Object.entries(v1Schemas)) expect(() => ajv.compile(rebase(s, V1) as object), name).not.toThrow();
    for (const [name, s] of Object.entries(openSchemas)) expect(() => ajv.compile(rebase(s, OPEN) as object), name).not.toThrow();
  });
});

describe('the field-type registry', () => {
  // Contract section 4: which operators apply to which types.
  // The computed types of section 12 filter as their result type (checked below); these are section 4's sixteen.
  const COMPUTED: FieldTypeName[] = ['formula', 'lookup', 'rollup', 'count'];
  const ALL = FIELD_TYPE_NAMES.filter((t) => !COMPUTED.includes(t));
  const but = (...out: FieldTypeName[]) => ALL.filter((t) => !out.includes(t));
  const TEXTS: FieldTypeName[] = ['text', 'long_text', 'email', 'url', 'phone'];
  const CONTRACT: Record<Operator, FieldTypeName[]> = {
    // attachment (section 16) is not in section 4's table: a list of files filters only by being empty or not.
    eq: but('multi_select', 'link', 'attachment'),
    neq: but('multi_select', 'link', 'attachment'),
    gt: ['number', 'rating', 'autonumber', 'date', 'created_time', 'last_modified_time', ...TEXTS],
    gte: ['number', 'rating', 'autonumber', 'date', 'created_time', 'last_modified_time', ...TEXTS],
    lt: ['number', 'rating', 'autonumber', 'date', 'created_time', 'last_modified_time', ...TEXTS],
    lte: ['number', 'rating', 'autonumber', 'date', 'created_time', 'last_modified_time', ...TEXTS],
    contains: TEXTS,
    not_contains: TEXTS,
    starts_with: TEXTS,
    ends_with: TEXTS,
    in: [...TEXTS, 'number', 'single_select', 'user'],
    not_in: [...TEXTS, 'number', 'single_select', 'user'],
    has_any: ['multi_select', 'link', 'user'],
    has_all: ['multi_select', 'link', 'user'],
    has_none: ['multi_select', 'link', 'user'],
    is_empty: ALL,
    is_not_empty: ALL,
  };

  it('lists the sixteen types of section 4, the four computed types of section 12 and attachment (section 16)', () => {
    expect([...FIELD_TYPE_NAMES].sort()).toEqual([
      'attachment', 'autonumber', 'checkbox', 'count', 'created_time', 'date', 'email', 'formula', 'last_modified_time', 'link', 'long_text', 'lookup',
      'multi_select', 'number', 'phone', 'rating', 'rollup', 'single_select', 'text', 'url', 'user',
    ]);
    expect(new Set(FIELD_TYPE_NAMES).size).toBe(FIELD_TYPE_NAMES.length);
    expect(Object.keys(FIELD_TYPES).sort()).toEqual([...FIELD_TYPE_NAMES].sort());
    expect(isFieldTypeName('text')).toBe(true);
    expect(isFieldTypeName('toString')).toBe(false);
    expect(isFieldTypeName('button')).toBe(false);
  });

  it('registers every type name with its own name, a valid storage and only known operators', () => {
    const storages = ['text', 'real', 'integer', 'json', 'link', 'system'];
    for (const name of FIELD_TYPE_NAMES) {
      const type = FIELD_TYPES[name];
      expect(type, name).toBeDefined();
      expect(type.name, name).toBe(name);
      expect(storages, `${name}: storage`).toContain(type.storage);
      if (type.storage === 'system') expect(['_seq', '_created_at', '_updated_at'], `${name}: systemColumn`).toContain(type.systemColumn);
      else expect(type.systemColumn, `${name}: systemColumn`).toBeUndefined();
      expect(type.operators.length, `${name}: operators`).toBeGreaterThan(0);
      for (const op of type.operators) expect(OPERATORS as readonly string[], `${name}: operator ${op}`).toContain(op);
      expect(new Set(type.operators).size, `${name}: repeated operator`).toBe(type.operators.length);
      for (const fn of ['normalizeSettings', 'toStored', 'fromStored', 'convert'] as const) expect(typeof type[fn], `${name}.${fn}`).toBe('function');
    }
  });

  it('makes exactly the system types and the computed types read-only; the system ones are system-stored', () => {
    const readOnly = FIELD_TYPE_NAMES.filter((n) => FIELD_TYPES[n].readOnly === true).sort();
    expect(readOnly).toEqual(['autonumber', 'count', 'created_time', 'formula', 'last_modified_time', 'lookup', 'rollup']);
    expect(FIELD_TYPE_NAMES.filter((n) => FIELD_TYPES[n].computed === true).sort()).toEqual(['count', 'formula', 'lookup', 'rollup']);
    expect(FIELD_TYPE_NAMES.filter((n) => FIELD_TYPES[n].storage === 'system').sort()).toEqual(['autonumber', 'created_time', 'last_modified_time']);
    expect(FIELD_TYPES.created_time.systemColumn).toBe('_created_at');
    expect(FIELD_TYPES.last_modified_time.systemColumn).toBe('_updated_at');
    expect(FIELD_TYPES.autonumber.systemColumn).toBe('_seq');
    expect(FIELD_TYPES.link.storage).toBe('link');
  });

  it('gives computed fields the operators of their result type (section 12)', () => {
    const ops = (type: FieldTypeName, config: Record<string, unknown> = {}) => [...typeOfField({ type, config }).operators].sort();
    expect(ops('formula', { result_type: 'number' })).toEqual([...FIELD_TYPES.number.operators].sort());
    expect(ops('formula', { result_type: 'text' })).toEqual([...FIELD_TYPES.text.operators].sort());
    expect(ops('formula', { result_type: 'boolean' })).toEqual([...FIELD_TYPES.checkbox.operators].sort());
    expect(ops('formula', { result_type: 'date' })).toEqual([...FIELD_TYPES.date.operators].sort());
    expect(ops('rollup', { result_type: 'number' })).toEqual([...FIELD_TYPES.number.operators].sort());
    expect(ops('count')).toEqual([...FIELD_TYPES.number.operators].sort());
    expect(ops('lookup')).toEqual(['has_all', 'has_any', 'has_none', 'is_empty', 'is_not_empty']);
  });

  it('gives each type exactly the operators of the contract table', () => {
    for (const name of ALL) {
      const expected = OPERATORS.filter((op) => CONTRACT[op].includes(name));
      expect([...FIELD_TYPES[name].operators].sort(), name).toEqual([...expected].sort());
    }
  });
});

describe('error codes', () => {
  // The codes of the v1 family (contract section 1); `satisfies` keeps them valid ErrorCodes at compile time.
  const CONTRACT_STATUS = {
    BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405, CONFLICT: 409,
    PAYLOAD_TOO_LARGE: 413, RATE_LIMITED: 429, INTERNAL_ERROR: 500,
  } as const satisfies Partial<Record<ErrorCode, number>>;

  /** The members of the ErrorCode union, read from the source of src/errors.ts. */
  function declaredCodes(): string[] {
    const source = fs.readFileSync(path.resolve(here, '../src/errors.ts'), 'utf8');
    const union = /export type ErrorCode\s*=([^;]+);/.exec(source);
    if (!union) throw new Error('src/errors.ts no longer declares `export type ErrorCode = ...;`');
    const body = union[1].replace(/\/\/[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
    return [...body.matchAll(/'([^']+)'|"([^"]+)"/g)].map((m) => m[1] ?? m[2]);
  }

  it('has a 4xx or 5xx status in STATUS_OF for every ErrorCode of src/errors.ts', () => {
    const codes = declaredCodes();
    expect(codes.length).toBeGreaterThanOrEqual(Object.keys(CONTRACT_STATUS).length);
    expect(new Set(codes).size, 'a code is declared twice').toBe(codes.length);
    expect(Object.keys(STATUS_OF).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      const status = STATUS_OF[code as ErrorCode];
      expect(Number.isInteger(status), `${code}: ${status}`).toBe(true);
      expect(status >= 400 && status <= 599, `${code}: ${status}`).toBe(true);
    }
  });

  it('gives the v1 family codes the statuses of the contract', () => {
    expect(STATUS_OF).toMatchObject(CONTRACT_STATUS);
    for (const code of Object.keys(CONTRACT_STATUS)) expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  });

  it('an AppError carries its code and status in its GraphQL extensions', () => {
    for (const code of Object.keys(STATUS_OF) as ErrorCode[]) {
      const e = new AppError(code, `m ${code}`, { details: [{ field: 'f', message: 'm' }] });
      expect(e.code, code).toBe(code);
      expect(e.status, code).toBe(STATUS_OF[code]);
      expect(e.message, code).toBe(`m ${code}`);
      expect(e.extensions, code).toEqual({ code, http: { status: STATUS_OF[code] }, details: [{ field: 'f', message: 'm' }] });
    }
    expect(new AppError('RATE_LIMITED', 'slow', { headers: { 'Retry-After': '3' } }).extensions).toEqual({
      code: 'RATE_LIMITED', http: { status: 429, headers: { 'Retry-After': '3' } },
    });
  });
});

describe('/graphql', () => {
  let c: TestClient;
  let member: { id: string; token: string; defaultBaseId: string; email: string };
  let tableId: string;
  let recordId: string;
  let fieldId: string;
  let workflowId: string;
  let webhookId: string;
  let pluginId: string;
  let scriptId: string;

  beforeAll(async () => {
    c = await makeApp();
    member = await c.user('Gina');
    tableId = await makeTable(c, [
      { name: 'Name', type: 'text' },
      { name: 'Size', type: 'number' },
      { name: 'Kind', type: 'single_select', options: ['a', 'b'] },
    ], { baseId: member.defaultBaseId, token: member.token, name: 'Things' });
    const batch = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, {
      token: member.token, body: { action: 'create', records: [{ fields: { Name: 'one', Size: 1, Kind: 'a' } }, { fields: { Name: 'two', Size: 2 } }] },
    });
    expect(batch.status).toBe(200);
    recordId = batch.body.data.items[0].id;
    const fields = await c.request('GET', `/api/v1/tables/${tableId}/fields`, { token: member.token });
    fieldId = fields.body.data.items[0].id;
    // A manual workflow with one finished run, so the workflow routes (and its run log) have real data.
    // It sets Size of record "two" to the value it already has: the records read back below stay as they were.
    const workflow = await c.request('POST', '/api/v1/workflows', {
      token: member.token,
      body: { name: 'Touch', table_id: tableId, trigger: { type: 'manual', config: {} }, nodes: [{ type: 'update_record', config: { fields: { Size: 2 } } }] },
    });
    expect(workflow.status, JSON.stringify(workflow.body)).toBe(201);
    workflowId = workflow.body.data.id;
    const run = await c.request('POST', `/api/v1/workflows/${workflowId}/trigger`, { token: member.token, body: { record_id: batch.body.data.items[1].id } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    // The runner picks the run up after the request; wait until the log shows it finished.
    const deadline = Date.now() + 10_000;
    for (;;) {
      await c.app.runner.idle();
      const log = await c.request('GET', `/api/v1/workflows/${workflowId}/logs`, { token: member.token });
      if (log.body.data.items[0]?.status === 'success') break;
      if (Date.now() > deadline) throw new Error(`the run did not finish: ${JSON.stringify(log.body)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    // A webhook of the member's base (disabled: nothing is sent anywhere) for the webhook routes.
    const webhook = await c.request('POST', `/api/v1/bases/${member.defaultBaseId}/webhooks`, {
      token: member.token, body: { url: 'https://example.com/hook', events: ['record.created'], table_id: tableId, enabled: false },
    });
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
    webhookId = webhook.body.data.id;
    // A real plugin for the /api/plugins routes: uploaded (multipart), enabled, installed in the member's base, configured.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await pack('record-tagger'))]), 'record-tagger.stplugin.zip');
    const uploaded = await c.app.fetch(new Request('http://test.local/api/plugins/upload', { method: 'POST', headers: { authorization: `Bearer ${c.adminToken}` }, body: form }));
    const plugin = (await uploaded.json()) as any;
    expect(uploaded.status, JSON.stringify(plugin)).toBe(201);
    pluginId = plugin.data.id;
    expect((await c.request('PUT', `/api/plugins/${pluginId}/status`, { body: { action: 'enable' } })).status).toBe(200);
    const installed = await c.request('POST', `/api/plugins/${pluginId}/installations`, { token: member.token, body: { base_id: member.defaultBaseId } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    const configured = await c.request('PUT', `/api/plugins/${pluginId}/config?scope=global`, { body: { config: { field: 'Name', note: 'global' } } });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    // A script plugin (examples/row-stats, as a raw application/zip body) with one run and one endpoint call in the member's
    // base, so the run log has real entries: two real sandboxed runs.
    const script = await c.app.fetch(new Request('http://test.local/api/plugins/upload', {
      method: 'POST', headers: { authorization: `Bearer ${c.adminToken}`, 'content-type': 'application/zip' }, body: new Uint8Array(await pack('row-stats')),
    }));
    const scriptBody = (await script.json()) as any;
    expect(script.status, JSON.stringify(scriptBody)).toBe(201);
    scriptId = scriptBody.data.id;
    expect((await c.request('PUT', `/api/plugins/${scriptId}/status`, { body: { action: 'enable' } })).status).toBe(200);
    const ran = await c.request('POST', `/api/plugins/${scriptId}/run`, { token: member.token, body: { base_id: member.defaultBaseId, table_id: tableId } });
    expect(ran.body.data, JSON.stringify(ran.body)).toMatchObject({ status: 'completed', result: { table_id: tableId, count: 2 } });
    const called = await c.request('POST', `/api/plugins/${scriptId}/call/summary`, { token: member.token, body: { base_id: member.defaultBaseId, payload: { table_id: tableId } } });
    expect(called.body.data, JSON.stringify(called.body)).toEqual({ result: { table_id: tableId, count: 2 } });
  });
  afterAll(() => c?.close());

  /** Asserts a GraphQL answer with one error: its code, status (extensions and HTTP) and message. */
  function expectGraphqlError(res: { status: number; body: any; headers: Headers }, code: ErrorCode, message: string) {
    expect(res.status).toBe(STATUS_OF[code]);
    expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ message, extensions: { code, http: { status: STATUS_OF[code] } } });
  }

  it('answers NOT_FOUND / 404 for a missing table, with the message REST gives', async () => {
    const gql = await c.graphql('{ table(id: "tblnope") { id } }');
    expectGraphqlError(gql, 'NOT_FOUND', 'Table tblnope not found');
    expect(gql.body.errors[0].path).toEqual(['table']);
    const rest = await c.request('GET', '/api/v1/tables/tblnope');
    expect(rest.status).toBe(404);
    expect(rest.body.msg).toBe(gql.body.errors[0].message);
  });

  it('answers UNAUTHORIZED / 401 without a token and with a bad one', async () => {
    expectGraphqlError(await c.graphql('{ me { id } }', undefined, null), 'UNAUTHORIZED', 'Authentication required');
    expectGraphqlError(await c.graphql('{ me { id } }', undefined, 'not.a.jwt'), 'UNAUTHORIZED', 'The token is invalid');
  });

  it('answers FORBIDDEN / 403 under the same permission rules as REST', async () => {
    const gql = await c.graphql('{ users { total } }', undefined, member.token);
    expectGraphqlError(gql, 'FORBIDDEN', 'You do not have permission to do this');
    const rest = await c.request('GET', '/api/v1/users', { token: member.token });
    expect([rest.status, rest.body.error, rest.body.msg]).toEqual([403, 'FORBIDDEN', gql.body.errors[0].message]);
  });

  it('answers BAD_REQUEST / 400 with the details REST gives', async () => {
    const gql = await c.graphql('mutation ($t: ID!, $f: JSON!) { createRecord(tableId: $t, fields: $f) { id } }', { t: tableId, f: { Size: 'big' } }, member.token);
    expectGraphqlError(gql, 'BAD_REQUEST', 'field "Size": expected a number, got a string');
    expect(gql.body.errors[0].extensions.details).toEqual([{ field: 'Size', message: 'field "Size": expected a number, got a string' }]);
    const rest = await c.request('POST', `/api/v1/tables/${tableId}/records`, { token: member.token, body: { fields: { Size: 'big' } } });
    expect(rest.status).toBe(400);
    expect({ msg: rest.body.msg, details: rest.body.details }).toEqual({ msg: gql.body.errors[0].message, details: gql.body.errors[0].extensions.details });
  });

  it('answers CONFLICT / 409 for a duplicate table name', async () => {
    const gql = await c.graphql(`mutation { createTable(baseId: "${member.defaultBaseId}", name: "Things") { id } }`, undefined, member.token);
    expectGraphqlError(gql, 'CONFLICT', 'A table named "Things" already exists in this base');
  });

  it('gives a successful answer with data and no errors', async () => {
    const res = await c.graphql('{ me { id email isAdmin } }', undefined, member.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { me: { id: member.id, email: member.email, isAdmin: false } } });
  });

  it('gives the same data as REST for every GET route run as its own GraphQL document', async () => {
    const params: Record<string, string> = {
      user_id: member.id, base_id: member.defaultBaseId, table_id: tableId, record_id: recordId, field_id: fieldId, workflow_id: workflowId,
      webhook_id: webhookId, plugin_id: pluginId,
    };
    // A job of the member's (an import of a file with no rows) for GET /api/v1/jobs/{job_id}.
    const form = new FormData();
    form.set('file', new Blob(['Nothing\n']), 'empty.csv');
    const imported = await c.request('POST', `/api/v1/tables/${tableId}/import`, { token: member.token, raw: form });
    expect(imported.status, JSON.stringify(imported.body)).toBe(202);
    params.job_id = imported.body.data.job_id;
    // The table's default view, shared, for the view and share routes.
    params.view_id = (await c.request('GET', `/api/v1/tables/${tableId}/views`, { token: member.token })).body.data[0].id;
    params.share_id = (await c.request('POST', `/api/v1/views/${params.view_id}/share`, { token: member.token })).body.data.share_id;
    // Routes that need other values: the run log is the script plugin's, of the member's base (where the member is owner).
    const PARAMS: Record<string, Record<string, string>> = { '/api/plugins/{plugin_id}/run-logs': { ...params, plugin_id: scriptId } };
    const QUERY: Record<string, Record<string, string>> = { '/api/plugins/{plugin_id}/run-logs': { base_id: member.defaultBaseId } };
    const getRoutes = v1Routes.filter((r) => r.method === 'GET');
    expect(getRoutes.length).toBeGreaterThanOrEqual(10);
    for (const route of getRoutes) {
      const routeParams = PARAMS[route.path] ?? params;
      const query = QUERY[route.path] ?? {};
      const url = route.path.replace(/\{(\w+)\}/g, (_m, n: string) => {
        if (routeParams[n] === undefined) throw new Error(`${route.path}: no value for {${n}}`);
        return routeParams[n];
      }) + (Object.keys(query).length ? `?${new URLSearchParams(query)}` : '');
      // System-administrator routes run with the admin token, the others with the member's. The plugin configuration
      // without query parameters is the global scope, which only system administrators read.
      const token = route.path.startsWith('/api/v1/users') || route.path === '/api/plugins/{plugin_id}/config' ? c.adminToken : member.token;
      const rest = await c.request('GET', url, { token });
      expect(rest.status, `${route.method} ${url}: ${JSON.stringify(rest.body)}`).toBe(200);
      const variables = route.variables({ params: routeParams, query, body: {}, headers: new Headers() } as RouteRequest);
      const gql = await c.graphql(route.document, variables, token);
      expect(gql.status, route.path).toBe(200);
      expect(gql.body.errors, route.path).toBeUndefined();
      if (route.download) {
        // An export streams the file over REST; the operation answers the plan that names it.
        expect(rest.headers.get('content-type'), route.path).toContain('text/csv');
        expect(route.result(gql.body.data), route.path).toMatchObject({ tableId, format: 'csv' });
        continue;
      }
      expect(route.result(gql.body.data), route.path).toEqual(rest.body.data);
      // The workflow routes compare real data: the workflow and its finished run.
      if (route.path === '/api/v1/workflows') expect(rest.body.data.items.map((w: any) => w.id)).toEqual([workflowId]);
      if (route.path === '/api/v1/workflows/{workflow_id}') expect(rest.body.data).toMatchObject({ id: workflowId, table_id: tableId, name: 'Touch' });
      if (route.path === '/api/v1/workflows/{workflow_id}/logs') expect(rest.body.data.items).toMatchObject([{ workflow_id: workflowId, status: 'success' }]);
      if (route.path === '/api/v1/bases/{base_id}/webhooks') expect(rest.body.data).toMatchObject([{ id: webhookId, table_id: tableId, enabled: false }]);
      // The plugin routes compare real data too: the uploaded, enabled and configured plugin.
      if (route.path === '/api/plugins') expect(rest.body.data.map((p: any) => [p.id, p.status])).toEqual([[pluginId, 'enabled'], [scriptId, 'enabled']]);
      if (route.path === '/api/plugins/{plugin_id}') expect(rest.body.data).toMatchObject({ id: pluginId, type: 'ui', version: '1.0.0', versions: [{ version: '1.0.0' }] });
      if (route.path === '/api/plugins/{plugin_id}/config') {
        expect(rest.body.data).toEqual({ scope: 'global', base_id: null, config: { field: 'Name', note: 'global' }, effective: { field: 'Name', note: 'global' } });
      }
      if (route.path === '/api/plugins/{plugin_id}/run-logs') {
        expect(rest.body.data).toMatchObject({
          items: [
            { plugin_id: scriptId, kind: 'call', endpoint: 'summary', base_id: member.defaultBaseId, user_id: member.id, status: 'completed', result: { table_id: tableId, count: 2 } },
            { plugin_id: scriptId, kind: 'run', endpoint: null, base_id: member.defaultBaseId, user_id: member.id, status: 'completed', logs: ['counted 2 records'] },
          ],
          total: 2, page: 1, page_size: 20,
        });
        // Without base_id (every base, system administrators) and paged: the same data both ways.
        const every = await c.request('GET', `/api/plugins/${scriptId}/run-logs?page=2&page_size=1`);
        expect(every.status, JSON.stringify(every.body)).toBe(200);
        const everyGql = await c.graphql(route.document, route.variables({ params: routeParams, query: { page: 2, page_size: 1 }, body: {}, headers: new Headers() } as RouteRequest));
        expect(everyGql.body.errors).toBeUndefined();
        expect(route.result(everyGql.body.data)).toEqual(every.body.data);
        expect(every.body.data).toEqual({ items: [rest.body.data.items[1]], total: 2, page: 2, page_size: 1 });
      }
    }
  });

  it('a hand-written query and REST agree field by field', async () => {
    const gql = await c.graphql(`{ table(id: "${tableId}") { id baseId name description createdAt updatedAt }
      record(tableId: "${tableId}", id: "${recordId}") { id fields createdAt updatedAt } }`, undefined, member.token);
    expect(gql.status).toBe(200);
    const table = (await c.request('GET', `/api/v1/tables/${tableId}`, { token: member.token })).body.data;
    const record = (await c.request('GET', `/api/v1/tables/${tableId}/records/${recordId}`, { token: member.token })).body.data;
    expect(gql.body.data.table).toEqual({
      id: table.id, baseId: table.base_id, name: table.name, description: table.description, createdAt: table.created_at, updatedAt: table.updated_at,
    });
    expect(table).toMatchObject({ id: tableId, base_id: member.defaultBaseId, name: 'Things' });
    expect(gql.body.data.record).toEqual({ id: record.id, fields: record.fields, createdAt: record.created_at, updatedAt: record.updated_at });
    expect(record.fields).toEqual({ Name: 'one', Size: 1, Kind: 'a' });
  });

  it('a write through GraphQL reads back identically through REST', async () => {
    const gql = await c.graphql(
      'mutation ($t: ID!, $f: JSON!) { createRecord(tableId: $t, fields: $f) { id fields createdAt updatedAt } }',
      { t: tableId, f: { Name: 'three', Size: 3.5, Kind: 'b' } }, member.token,
    );
    expect(gql.status).toBe(200);
    const created = gql.body.data.createRecord;
    expect(created.fields).toEqual({ Name: 'three', Size: 3.5, Kind: 'b' });
    const rest = await c.request('GET', `/api/v1/tables/${tableId}/records/${created.id}`, { token: member.token });
    expect(rest.body.data).toEqual({ id: created.id, fields: created.fields, created_at: created.createdAt, updated_at: created.updatedAt });
    const page = await c.request('GET', `/api/v1/tables/${tableId}/records`, { token: member.token });
    expect(page.body.data.items.map((r: any) => r.fields.Name)).toEqual(['one', 'two', 'three']);
  });
});
