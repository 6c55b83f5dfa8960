// Maps GraphQL answers (camelCase) onto the REST shapes (snake_case) of the v1 family.
type Obj = Record<string, any>;

export const restUser = (u: Obj) => ({
  id: u.id, email: u.email, name: u.name, is_admin: u.isAdmin, default_base_id: u.defaultBaseId ?? null,
  created_at: u.createdAt, updated_at: u.updatedAt,
});
export const restBase = (b: Obj) => ({ id: b.id, name: b.name, description: b.description, role: b.role, created_at: b.createdAt, updated_at: b.updatedAt });
export const restMember = (m: Obj) => ({ user_id: m.userId, email: m.email, name: m.name, role: m.role, created_at: m.createdAt });
export const restTable = (t: Obj) => ({
  id: t.id, base_id: t.baseId, name: t.name, description: t.description, created_at: t.createdAt, updated_at: t.updatedAt,
});
export const restField = (f: Obj) => ({
  id: f.id, table_id: f.tableId, name: f.name, type: f.type, required: f.required, options: f.options ?? null, config: f.config, indexed: f.indexed,
  computing: f.computing ?? null,
});
export const restRecord = (r: Obj) => ({ id: r.id, fields: r.fields, created_at: r.createdAt, updated_at: r.updatedAt });
export const restPage = (map: (x: Obj) => unknown) => (p: Obj) => ({ items: p.items.map(map), total: p.total, page: p.page, page_size: p.pageSize });

/** GraphQL selection sets matching the mappers above. */
export const SELECT = {
  user: 'id email name isAdmin defaultBaseId createdAt updatedAt',
  base: 'id name description role createdAt updatedAt',
  member: 'userId email name role createdAt',
  table: 'id baseId name description createdAt updatedAt',
  field: 'id tableId name type required options config indexed computing',
  record: 'id fields createdAt updatedAt',
  page: (item: string) => `items { ${item} } total page pageSize`,
  app: 'id appName clientId callbackUrl allowedBases scopes isActive rateLimitPerMinute writeRateLimitPerMinute createdAt updatedAt',
  openBase: 'id name description createdAt updatedAt',
  openTable: 'id baseId name description createdAt updatedAt',
  openField: 'id name type required options config computing',
  openRecord: 'id values createdAt updatedAt',
  workflow: 'id name tableId enabled trigger { type config } nodes { id type config } createdAt updatedAt',
  run: 'runId workflowId status triggerType recordId depth queuedAt startedAt finishedAt error steps',
};

export const openApp = (a: Obj) => ({
  id: a.id, app_name: a.appName, client_id: a.clientId, callback_url: a.callbackUrl, allowed_bases: a.allowedBases, scopes: a.scopes,
  is_active: a.isActive, rate_limit_per_minute: a.rateLimitPerMinute, write_rate_limit_per_minute: a.writeRateLimitPerMinute,
  created_at: a.createdAt, updated_at: a.updatedAt,
});
export const openToken = (t: Obj) => ({ jti: t.jti, scope: t.scope, issued_at: t.issuedAt, expires_at: t.expiresAt, revoked: t.revoked, revoked_at: t.revokedAt });
export const openAudit = (e: Obj) => ({
  id: e.id, app_id: e.appId, action: e.action, base_id: e.baseId, table_id: e.tableId, record_id: e.recordId, request_id: e.requestId, at: e.at, detail: e.detail,
});
export const openBase = (b: Obj) => ({ id: b.id, name: b.name, description: b.description, created_at: b.createdAt, updated_at: b.updatedAt });
export const openTable = (t: Obj) => ({ id: t.id, base_id: t.baseId, name: t.name, description: t.description, created_at: t.createdAt, updated_at: t.updatedAt });
export const openField = (f: Obj) => ({ id: f.id, name: f.name, type: f.type, required: f.required, options: f.options ?? null, config: f.config, computing: f.computing ?? null });
export const openRecord = (r: Obj) => ({ id: r.id, values: r.values, created_at: r.createdAt, updated_at: r.updatedAt });
/** An Open API page: `data` is the array and `pagination` says where it sits. */
export const openPage = (map: (x: Obj) => unknown) => (p: Obj) => ({
  data: p.items.map(map),
  pagination: { page: p.page, per_page: p.pageSize, total: p.total, pages: Math.ceil(p.total / p.pageSize) },
});

