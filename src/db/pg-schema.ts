// Drizzle definitions of the service's own tables on PostgreSQL: the twin of schema.ts (kept in step by test/schema-parity).
// Column types are chosen to give the same JavaScript values as the SQLite ones, since the domain is typed against schema.ts.
import { sql } from 'drizzle-orm';
import { pgTable, text, boolean, bigint, json, customType, primaryKey, uniqueIndex, index } from 'drizzle-orm/pg-core';

/** SQLite's `blob({ mode: 'buffer' })`: node-postgres already reads and writes bytea as a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

// SQLite integers are 64-bit; bigint in number mode keeps that range and still hands the domain a JS number.

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  isAdmin: boolean('is_admin').notNull().default(false),
  defaultBaseId: text('default_base_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [uniqueIndex('users_email').on(t.email)]);

/** Revoked token ids (user logout now, application tokens later); loaded into memory at start. */
export const revokedTokens = pgTable('revoked_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  revokedAt: text('revoked_at').notNull(),
});

export const bases = pgTable('bases', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const baseMembers = pgTable('base_members', {
  baseId: text('base_id').notNull().references(() => bases.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['owner', 'admin', 'editor', 'viewer'] }).notNull(),
  createdAt: text('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.baseId, t.userId] }), index('base_members_user').on(t.userId)]);

export const tables = pgTable('tables', {
  id: text('id').primaryKey(),
  baseId: text('base_id').notNull().references(() => bases.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [index('tables_base').on(t.baseId)]);

export const fields = pgTable('fields', {
  id: text('id').primaryKey(),
  tableId: text('table_id').notNull().references(() => tables.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  type: text('type').notNull(),
  required: boolean('required').notNull().default(false),
  /** JSON array of choices for select types, else null. */
  options: json('options').$type<string[] | null>(),
  /** JSON object of type settings, e.g. {"table_id": ...} for link. */
  config: json('config').$type<Record<string, unknown>>().notNull(),
  indexed: boolean('indexed').notNull().default(false),
  position: bigint('position', { mode: 'number' }).notNull(),
  createdAt: text('created_at').notNull(),
  /** A computed field whose values are still being computed in the background: the `_seq` done up to; null once current. */
  fillAfterSeq: bigint('fill_after_seq', { mode: 'number' }),
}, (t) => [index('fields_table').on(t.tableId)]);

/** Third-party applications (OAuth 2.0 client credentials); only a hash of the secret is kept. */
export const apps = pgTable('apps', {
  id: text('id').primaryKey(),
  appName: text('app_name').notNull(),
  clientId: text('client_id').notNull(),
  secretHash: text('secret_hash').notNull(),
  callbackUrl: text('callback_url').notNull(),
  allowedBases: json('allowed_bases').$type<string[]>().notNull(),
  scopes: json('scopes').$type<string[]>().notNull(),
  isActive: boolean('is_active').notNull().default(true),
  rateLimitPerMinute: bigint('rate_limit_per_minute', { mode: 'number' }).notNull(),
  writeRateLimitPerMinute: bigint('write_rate_limit_per_minute', { mode: 'number' }).notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [uniqueIndex('apps_client_id').on(t.clientId)]);

/** Every token issued to an application, for the token list and revoke-all. */
export const appTokens = pgTable('app_tokens', {
  /** Insertion order (SQLite orders these logs by rowid; Store.insertionOrder names this column here). */
  seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
  jti: text('jti').primaryKey(),
  appId: text('app_id').notNull(),
  scope: text('scope').notNull(),
  issuedAt: text('issued_at').notNull(),
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  revokedAt: text('revoked_at'),
}, (t) => [index('app_tokens_app').on(t.appId, t.expiresAt)]);

/** Application audit log: Open API record writes and management actions. */
export const auditLog = pgTable('audit_log', {
  /** Insertion order (SQLite orders these logs by rowid; Store.insertionOrder names this column here). */
  seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
  id: text('id').primaryKey(),
  appId: text('app_id').notNull(),
  action: text('action').notNull(),
  baseId: text('base_id'),
  tableId: text('table_id'),
  recordId: text('record_id'),
  requestId: text('request_id'),
  at: text('at').notNull(),
  detail: json('detail').$type<Record<string, unknown> | null>(),
}, (t) => [index('audit_app').on(t.appId)]);

/** Workflows bound to a table: a trigger and nodes that run in order. */
export const workflows = pgTable('workflows', {
  id: text('id').primaryKey(),
  tableId: text('table_id').notNull().references(() => tables.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  trigger: json('trigger').$type<{ type: string; config: Record<string, unknown> }>().notNull(),
  nodes: json('nodes').$type<Array<{ id: string; type: string; config: Record<string, unknown> }>>().notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [index('workflows_table').on(t.tableId)]);

/** The durable run queue and run log: a run is queued in the transaction of the change that caused it. */
export const workflowRuns = pgTable('workflow_runs', {
  /** Insertion order (SQLite orders these logs by rowid; Store.insertionOrder names this column here). */
  seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
  id: text('id').primaryKey(),
  workflowId: text('workflow_id').notNull().references(() => workflows.id, { onDelete: 'cascade' }),
  tableId: text('table_id').notNull(),
  recordId: text('record_id'),
  triggerType: text('trigger_type').notNull(),
  /** How many workflow-caused changes led here (0 for a change by a person or an application). */
  depth: bigint('depth', { mode: 'number' }).notNull().default(0),
  status: text('status', { enum: ['queued', 'running', 'success', 'failed'] }).notNull(),
  queuedAt: text('queued_at').notNull(),
  startedAt: text('started_at'),
  finishedAt: text('finished_at'),
  error: text('error'),
  /** While running: until when the claiming process holds it; past this, the run was cut off (a crash). */
  leaseUntil: text('lease_until'),
  steps: json('steps').$type<unknown[]>().notNull(),
}, (t) => [index('workflow_runs_workflow').on(t.workflowId), index('workflow_runs_status').on(t.status)]);

/** How far each table's keyword-search index has caught up: rows up to `indexed_seq` are indexed. */
export const searchState = pgTable('search_state', {
  tableId: text('table_id').primaryKey(),
  indexedSeq: bigint('indexed_seq', { mode: 'number' }).notNull(),
});

/** Indexed rows changed since: re-indexed before the next search or by the background indexer. */
export const searchDirty = pgTable('search_dirty', {
  tableId: text('table_id').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.tableId, t.seq] })]);

/** Installed plugins: one row per plugin id, pointing at its current version. */
export const plugins = pgTable('plugins', {
  id: text('id').primaryKey(),
  type: text('type', { enum: ['ui', 'script'] }).notNull(),
  currentVersion: text('current_version').notNull(),
  status: text('status', { enum: ['enabled', 'disabled', 'error'] }).notNull(),
  consecutiveFailures: bigint('consecutive_failures', { mode: 'number' }).notNull().default(0),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** Every uploaded version, kept for rollback, with its manifest. */
export const pluginVersions = pgTable('plugin_versions', {
  pluginId: text('plugin_id').notNull().references(() => plugins.id, { onDelete: 'cascade' }),
  version: text('version').notNull(),
  manifest: json('manifest').$type<Record<string, unknown>>().notNull(),
  uploadedAt: text('uploaded_at').notNull(),
}, (t) => [primaryKey({ columns: [t.pluginId, t.version] })]);

/** The files of each version (in the database, so a backup holds them too). */
export const pluginFiles = pgTable('plugin_files', {
  pluginId: text('plugin_id').notNull(),
  version: text('version').notNull(),
  path: text('path').notNull(),
  content: bytea('content').notNull(),
}, (t) => [primaryKey({ columns: [t.pluginId, t.version, t.path] })]);

/** Configuration per scope: base_id '' is the global scope. */
export const pluginConfigs = pgTable('plugin_configs', {
  pluginId: text('plugin_id').notNull().references(() => plugins.id, { onDelete: 'cascade' }),
  baseId: text('base_id').notNull(),
  config: json('config').$type<Record<string, unknown>>().notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.pluginId, t.baseId] })]);

/** Base installations of ui plugins. */
export const pluginInstallations = pgTable('plugin_installations', {
  pluginId: text('plugin_id').notNull().references(() => plugins.id, { onDelete: 'cascade' }),
  baseId: text('base_id').notNull().references(() => bases.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull(),
  createdAt: text('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.pluginId, t.baseId] })]);

/** Each plugin's key-value storage, per base. */
export const pluginStorage = pgTable('plugin_storage', {
  pluginId: text('plugin_id').notNull().references(() => plugins.id, { onDelete: 'cascade' }),
  baseId: text('base_id').notNull(),
  key: text('key').notNull(),
  value: text('value').notNull(),
}, (t) => [primaryKey({ columns: [t.pluginId, t.baseId, t.key] })]);

/** Script runs and endpoint calls, with their outcome and logs (the run log of base administrators). */
export const pluginRuns = pgTable('plugin_runs', {
  /** Insertion order (SQLite orders these logs by rowid; Store.insertionOrder names this column here). */
  seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
  id: text('id').primaryKey(),
  pluginId: text('plugin_id').notNull().references(() => plugins.id, { onDelete: 'cascade' }),
  version: text('version').notNull(),
  kind: text('kind', { enum: ['run', 'call'] }).notNull(),
  endpoint: text('endpoint'),
  baseId: text('base_id').notNull(),
  userId: text('user_id').notNull(),
  status: text('status', { enum: ['running', 'completed', 'failed'] }).notNull(),
  startedAt: text('started_at').notNull(),
  finishedAt: text('finished_at'),
  durationMs: bigint('duration_ms', { mode: 'number' }),
  result: json('result'),
  error: text('error'),
  traceback: text('traceback'),
  /** While running: until when the process running it holds it; past this, the run was cut off (a crash). */
  leaseUntil: text('lease_until'),
  logs: json('logs').$type<string[]>().notNull(),
}, (t) => [index('plugin_runs_plugin').on(t.pluginId, t.baseId)]);

// PostgreSQL only, with no SQLite twin: the keys, rate limits, login failures and the write version (pg-only-schema.ts).
export * from './pg-only-schema.js';

/**
 * The event log (contract section 14): every change to records, fields, tables and views, written in the transaction of
 * the change; read by cursor (`seq` per base) and pruned after EVENT_RETENTION_DAYS.
 */
export const events = pgTable('events', {
  id: text('id').notNull(),
  baseId: text('base_id').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  type: text('type').notNull(),
  tableId: text('table_id'),
  recordId: text('record_id'),
  actorType: text('actor_type').notNull(),
  actorId: text('actor_id'),
  at: text('at').notNull(),
  data: json('data').$type<unknown>().notNull(),
  eventCount: bigint('event_count', { mode: 'number' }).notNull().default(1),
}, (t) => [
  // As in schema.ts: (base, seq) orders the log; record_id serves record history and finds the other events through its
  // nulls; the rows of several events have an entry per table, where record history looks for them.
  primaryKey({ columns: [t.baseId, t.seq] }), index('events_record').on(t.recordId).where(sql`${t.eventCount} = 1`),
  index('events_rows_of_many').on(t.tableId).where(sql`${t.eventCount} > 1`),
]);

/** Answers kept for `Idempotency-Key` (contract section 14): per actor and key, 24 h; `status` null while the first runs. */
export const idempotencyKeys = pgTable('idempotency_keys', {
  actor: text('actor').notNull(),
  key: text('key').notNull(),
  /** Method, path and a hash of the body: a repeat must match it. */
  fingerprint: text('fingerprint').notNull(),
  status: bigint('status', { mode: 'number' }),
  headers: json('headers').$type<Record<string, string>>(),
  body: text('body'),
  expiresAt: text('expires_at').notNull(),
}, (t) => [primaryKey({ columns: [t.actor, t.key] }), index('idempotency_expires').on(t.expiresAt)]);

/** Webhooks of a base (contract section 14). */
export const webhooks = pgTable('webhooks', {
  id: text('id').primaryKey(),
  baseId: text('base_id').notNull().references(() => bases.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  events: json('events').$type<string[]>().notNull(),
  tableId: text('table_id'),
  enabled: boolean('enabled').notNull().default(true),
  disabledReason: text('disabled_reason'),
  /** `whsec_...`: the signing key must be known to sign, so it is kept as given out. */
  secret: text('secret').notNull(),
  consecutiveFailures: bigint('consecutive_failures', { mode: 'number' }).notNull().default(0),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [index('webhooks_base').on(t.baseId)]);

/** One event to deliver to one webhook: queued with the event, retried with backoff, kept as the delivery log. */
export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  eventId: text('event_id').notNull(),
  /** The event's type (`ping` for a test delivery): lists show it and a ping is kept out of the failure count. */
  eventType: text('event_type').notNull().default(''),
  /** The JSON body sent on every attempt (the event may be pruned before the last retry). */
  payload: text('payload').notNull(),
  status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
  attempts: bigint('attempts', { mode: 'number' }).notNull().default(0),
  lastStatus: bigint('last_status', { mode: 'number' }),
  lastError: text('last_error'),
  nextAttemptAt: text('next_attempt_at'),
  /** While an attempt runs: until when its process holds it. */
  leaseUntil: text('lease_until'),
  createdAt: text('created_at').notNull(),
  deliveredAt: text('delivered_at'),
}, (t) => [index('webhook_deliveries_webhook').on(t.webhookId, t.createdAt), index('webhook_deliveries_due').on(t.status, t.nextAttemptAt)]);

/**
 * Background jobs (contract section 15): imports, claimed by one process at a time like workflow runs. Progress and
 * the first errors are written with each chunk of work, so what a crash cut off is counted when it is marked failed.
 */
export const jobs = pgTable('jobs', {
  /** Queue order (SQLite's rowid). */
  seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
  id: text('id').primaryKey(),
  type: text('type', { enum: ['import', 'export'] }).notNull(),
  status: text('status', { enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] }).notNull(),
  baseId: text('base_id').notNull(),
  tableId: text('table_id'),
  /** The user who started it: with the base's admins, the only one who may read or cancel it. */
  createdBy: text('created_by').notNull(),
  /** What the job works on: the spooled file, its format and the options it was given. */
  input: json('input').$type<Record<string, unknown>>().notNull(),
  /** The DATA_DIR the job's file was spooled into: only processes sharing it may claim the job. */
  spool: text('spool').notNull(),
  processed: bigint('processed', { mode: 'number' }).notNull().default(0),
  total: bigint('total', { mode: 'number' }),
  imported: bigint('imported', { mode: 'number' }).notNull().default(0),
  failed: bigint('failed', { mode: 'number' }).notNull().default(0),
  errors: json('errors').$type<unknown[]>().notNull(),
  error: text('error'),
  cancelRequested: boolean('cancel_requested').notNull().default(false),
  createdAt: text('created_at').notNull(),
  startedAt: text('started_at'),
  finishedAt: text('finished_at'),
  leaseUntil: text('lease_until'),
}, (t) => [index('jobs_status').on(t.status), index('jobs_created_by').on(t.createdBy)]);

/**
 * Views of a table (contract section 13): filter, sort, hidden fields and field order stored by field id, so a renamed
 * field never breaks one. `share_id` is set while the view is shared by link; a new share gets a new id.
 */
export const views = pgTable('views', {
  id: text('id').primaryKey(),
  tableId: text('table_id').notNull().references(() => tables.id, { onDelete: 'cascade' }),
  baseId: text('base_id').notNull(),
  name: text('name').notNull(),
  type: text('type').notNull(),
  filter: json('filter').$type<unknown>(),
  sort: json('sort').$type<unknown>(),
  hiddenFields: json('hidden_fields').$type<string[]>().notNull(),
  fieldOrder: json('field_order').$type<string[]>().notNull(),
  config: json('config').$type<Record<string, unknown>>().notNull(),
  personal: boolean('personal').notNull().default(false),
  locked: boolean('locked').notNull().default(false),
  createdBy: text('created_by'),
  shareId: text('share_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
}, (t) => [index('views_table').on(t.tableId), uniqueIndex('views_share').on(t.shareId)]);

/** The trash (contract section 16): the twin of schema.ts's. */
export const trash = pgTable('trash', {
  id: text('id').primaryKey(),
  baseId: text('base_id').notNull(),
  type: text('type').notNull(),
  tableId: text('table_id').notNull(),
  itemId: text('item_id').notNull(),
  name: text('name').notNull(),
  payload: text('payload').notNull(),
  deletedAt: text('deleted_at').notNull(),
  deletedBy: text('deleted_by'),
  expiresAt: text('expires_at').notNull(),
}, (t) => [index('trash_base_deleted').on(t.baseId, t.deletedAt), index('trash_expires').on(t.expiresAt)]);

/** Uploaded attachment files (contract 16): the bytes live in `attachment_chunks`, so every process serves every file. */
export const attachments = pgTable('attachments', {
  id: text('id').primaryKey(),
  /** The uploader: only they may name the attachment in a record write (until a record holds it). */
  ownerId: text('owner_id').notNull(),
  name: text('name').notNull(),
  size: bigint('size', { mode: 'number' }).notNull(),
  mimeType: text('mime_type').notNull(),
  sha256: text('sha256').notNull(),
  /** `{small:{width,height},large:{width,height}}` for images, else null. */
  thumbnails: json('thumbnails').$type<Record<string, { width: number; height: number }> | null>(),
  createdAt: text('created_at').notNull(),
}, (t) => [index('attachments_created_at').on(t.createdAt)]);

/** The bytes of a file and its thumbnails in ~1 MiB chunks, written and read one chunk at a time. */
export const attachmentChunks = pgTable('attachment_chunks', {
  attachmentId: text('attachment_id').notNull(),
  /** `original`, `small` or `large`. */
  variant: text('variant').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  data: bytea('data').notNull(),
}, (t) => [primaryKey({ columns: [t.attachmentId, t.variant, t.seq] })]);
