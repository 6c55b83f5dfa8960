// JSON Schemas of the /api/v1 resources: the OpenAPI components, also used to check answers in tests.
import type { JsonSchema } from './route.js';
import { FIELD_TYPE_NAMES } from '../src/fields/field-type.js';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const obj = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object', properties, required, additionalProperties: false,
});

const webhookProps = {
  id: str, base_id: str, url: str, events: { type: 'array', items: str }, table_id: { type: ['string', 'null'] }, enabled: bool,
  disabled_reason: { type: ['string', 'null'] }, consecutive_failures: int, created_at: time, updated_at: time,
};

/** The trash and record history (contract section 16): the same answers in both families. */
const trashSchemas = {
  TrashItem: obj({ id: str, type: { enum: ['record', 'field', 'table'] }, name: str, table_id: str, deleted_at: time, deleted_by: { type: ['string', 'null'] } }),
  Restored: obj({ id: str, type: { enum: ['record', 'field', 'table'] }, item_id: str }),
  HistoryEntry: obj({
    at: time, type: { enum: ['created', 'updated', 'deleted'] }, actor: obj({ type: str, id: { type: ['string', 'null'] } }),
    changes: { type: 'object', description: '{<field name>: {before, after}}' },
  }),
};

export const v1Schemas: Record<string, JsonSchema> = {
  User: obj({ id: str, email: str, name: str, is_admin: bool, default_base_id: { type: ['string', 'null'] }, created_at: time, updated_at: time }),
  Login: obj({ token: str, token_type: { const: 'Bearer' }, expires_in: int, user: { $ref: '#/components/schemas/User' } }),
  Base: obj({ id: str, name: str, description: str, role: { enum: ['owner', 'admin', 'editor', 'viewer'] }, created_at: time, updated_at: time }),
  Member: obj({ user_id: str, email: str, name: str, role: { enum: ['owner', 'admin', 'editor', 'viewer'] }, created_at: time }),
  Table: obj({ id: str, base_id: str, name: str, description: str, created_at: time, updated_at: time }),
  Field: obj({
    id: str, table_id: str, name: str, type: { enum: [...FIELD_TYPE_NAMES] }, required: bool,
    options: { type: ['array', 'null'], items: str }, config: { type: 'object' }, indexed: bool,
    computing: { type: ['object', 'null'], description: 'A computed field still being computed in the background: {done, total}; null once current' },
  }),
  Event: obj({
    id: str, seq: { type: 'string', pattern: '^[0-9]+$' }, type: str, base_id: str, table_id: { type: ['string', 'null'] },
    record_id: { type: ['string', 'null'] }, actor: obj({ type: str, id: { type: ['string', 'null'] } }), at: time, data: { type: 'object' },
  }),
  View: obj({
    id: str, table_id: str, name: str, type: { enum: ['grid', 'form', 'kanban', 'gallery', 'calendar'] },
    filter: { type: ['object', 'null'], description: 'Section 4 filter, fields by id' }, sort: { type: ['array', 'null'], description: 'Section 4 sort keys, fields by id' },
    hidden_fields: { type: 'array', items: str }, field_order: { type: 'array', items: str }, config: { type: 'object' },
    personal: bool, locked: bool, created_by: { type: ['string', 'null'] }, share_id: { type: ['string', 'null'], description: 'Set while shared by link' },
    created_at: time, updated_at: time,
  }),
  Webhook: obj(webhookProps),
  WebhookWithSecret: obj({ ...webhookProps, secret: { type: 'string', pattern: '^whsec_', description: 'Shown only here: keep it' } }),
  WebhookDelivery: obj({
    id: str, webhook_id: str, event_id: str, event_type: str, status: { enum: ['pending', 'delivered', 'failed'] }, attempts: int,
    last_status: { type: ['integer', 'null'] }, last_error: { type: ['string', 'null'] }, next_attempt_at: { type: ['string', 'null'] },
    created_at: time, delivered_at: { type: ['string', 'null'] },
  }),
  Job: obj({
    id: str, type: { enum: ['import', 'export'] }, status: { enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] },
    table_id: { type: ['string', 'null'] }, processed: int, total: { type: ['integer', 'null'], description: 'Rows of the file: an estimate from its line count until the end' },
    imported: int, failed: int,
    errors: { type: 'array', description: 'The first 1000 rows not imported; row counts from 1 at the first data row', items: obj({ row: int, column: { type: ['string', 'null'] }, field: { type: ['string', 'null'] }, message: str }) },
    error: { type: ['string', 'null'] }, created_by: str, created_at: time, started_at: { type: ['string', 'null'] }, finished_at: { type: ['string', 'null'] },
  }),
  EventPage: obj({ items: { type: 'array', items: { $ref: '#/components/schemas/Event' } }, next: { type: ['string', 'null'] } }),
  Record: obj({
    id: str,
    fields: { type: 'object', description: 'Values keyed by field name; every field present, null when empty' },
    created_at: time, updated_at: time,
  }),
  Deleted: obj({ id: str, deleted: { const: true } }),
  ...trashSchemas,
  Workflow: obj({
    id: str, name: str, table_id: str, enabled: bool,
    trigger: { type: 'object', properties: { type: { enum: ['record_created', 'record_updated', 'manual'] }, config: { type: 'object' } }, required: ['type', 'config'] },
    nodes: { type: 'array', items: { type: 'object', properties: { id: str, type: str, config: { type: 'object' } }, required: ['id', 'type', 'config'] } },
    created_at: time, updated_at: time,
  }),
  RunEntry: obj({
    run_id: str, workflow_id: str, status: { enum: ['queued', 'running', 'success', 'failed'] },
    trigger: obj({ type: str, record_id: { type: ['string', 'null'] } }), depth: int,
    queued_at: time, started_at: { type: ['string', 'null'] }, finished_at: { type: ['string', 'null'] }, error: { type: ['string', 'null'] },
    steps: {
      type: 'array',
      items: obj({
        node_id: str, type: str, status: { enum: ['success', 'failed', 'skipped'] }, started_at: { type: ['string', 'null'] },
        finished_at: { type: ['string', 'null'] }, output: {}, error: { type: ['string', 'null'] },
      }),
    },
  }),
  Plugin: {
    ...obj({
      id: str, name: str, description: str, author: { type: 'object' }, type: { enum: ['ui', 'script'] }, version: str,
      versions: { type: 'array', items: obj({ version: str, uploaded_at: time }) },
      status: { enum: ['enabled', 'disabled', 'error'] }, consecutive_failures: int, permissions: { type: 'object' },
      extension_points: { type: 'array' }, endpoints: { type: 'array' }, config_schema: { type: ['object', 'null'] },
      created_at: time, updated_at: time, installation: obj({ installed: bool, enabled: bool }),
    }),
    required: ['id', 'name', 'description', 'author', 'type', 'version', 'versions', 'status', 'consecutive_failures', 'permissions', 'extension_points', 'endpoints', 'config_schema', 'created_at', 'updated_at'],
  },
  PluginRun: obj({ run_id: str, status: { enum: ['completed', 'failed'] }, result: {}, error: { type: ['string', 'null'] }, logs: { type: 'array', items: str } }),
  PluginRunLog: obj({
    run_id: str, plugin_id: str, version: str, kind: { enum: ['run', 'call'] }, endpoint: { type: ['string', 'null'] }, base_id: str, user_id: str,
    status: { enum: ['running', 'completed', 'failed'] }, started_at: time, finished_at: { type: ['string', 'null'] }, duration_ms: { type: ['integer', 'null'] },
    result: {}, error: { type: ['string', 'null'] }, traceback: { type: ['string', 'null'] }, logs: { type: 'array', items: str },
  }),
  PluginConfig: obj({ scope: { enum: ['global', 'base'] }, base_id: { type: ['string', 'null'] }, config: { type: 'object' }, effective: { type: 'object' } }),
  ProxyAnswer: obj({ status: int, headers: { type: 'object' }, body: str, body_encoding: { enum: ['text', 'base64'] } }),
  SandboxUrl: obj({ url: str, expires_at: time, handshake_token: str, context: { type: 'object' }, permissions: { type: 'object' } }),
  Error: {
    type: 'object',
    required: ['code', 'msg', 'error', 'data', 'request_id'],
    properties: {
      code: int, msg: str, error: str, data: { type: 'null' }, request_id: str,
      details: { type: 'array', items: { type: 'object', properties: { index: int, field: str, path: str, message: str }, required: ['message'] } },
    },
  },
};

export const pageSchema = (item: string): JsonSchema =>
  obj({ items: { type: 'array', items: { $ref: `#/components/schemas/${item}` } }, total: int, page: int, page_size: int });

const nullableStr = { type: ['string', 'null'] } as const;
const scopeEnum = { enum: ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'] };
const appProps = {
  id: str, app_name: str, client_id: str, callback_url: str, allowed_bases: { type: 'array', items: str },
  scopes: { type: 'array', items: scopeEnum }, is_active: bool, rate_limit_per_minute: int, write_rate_limit_per_minute: int,
  created_at: time, updated_at: time,
};
const openBaseProps = { id: str, name: str, description: str, created_at: time, updated_at: time };
const openTableProps = { id: str, base_id: str, name: str, description: str, created_at: time, updated_at: time };

/** Components of the Open API document (/api/open/v1 and /api/oauth). */
export const openSchemas: Record<string, JsonSchema> = {
  App: obj(appProps),
  AppWithSecret: obj({ ...appProps, client_secret: str }),
  Token: obj({ jti: str, scope: str, issued_at: time, expires_at: time, revoked: bool, revoked_at: { type: ['string', 'null'], format: 'date-time' } }),
  AuditEntry: obj({ id: str, app_id: str, action: str, base_id: nullableStr, table_id: nullableStr, record_id: nullableStr, request_id: nullableStr, at: time, detail: { type: ['object', 'null'] } }),
  BaseSummary: obj(openBaseProps),
  BaseDetail: obj({ ...openBaseProps, tables: { type: 'array', items: { $ref: '#/components/schemas/Table' } } }),
  Table: obj(openTableProps),
  TableDetail: obj({ ...openTableProps, fields: { type: 'array', items: { $ref: '#/components/schemas/Field' } } }),
  Field: obj({
    id: str, name: str, type: { enum: [...FIELD_TYPE_NAMES] }, required: bool, options: { type: ['array', 'null'], items: str }, config: { type: 'object' },
    computing: { type: ['object', 'null'] },
  }),
  Record: obj({ id: str, values: { type: 'object', description: 'Values keyed by field id' }, created_at: time, updated_at: time }),
  Deleted: obj({ id: str, deleted: { const: true } }),
  ...trashSchemas,
  Pagination: obj({ page: int, per_page: int, total: int, pages: int }),
  TokenResponse: obj({ access_token: str, token_type: { const: 'Bearer' }, expires_in: int, scope: str }),
  TokenError: obj({ error: { enum: ['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope', 'server_error'] }, error_description: str, request_id: str }),
  Error: obj({ code: int, message: str, error: str, request_id: str }),
};
