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
});
export const restRecord = (r: Obj) => ({ id: r.id, fields: r.fields, created_at: r.createdAt, updated_at: r.updatedAt });
export const restPage = (map: (x: Obj) => unknown) => (p: Obj) => ({ items: p.items.map(map), total: p.total, page: p.page, page_size: p.pageSize });

/** GraphQL selection sets matching the mappers above. */
export const SELECT = {
  user: 'id email name isAdmin defaultBaseId createdAt updatedAt',
  base: 'id name description role createdAt updatedAt',
  member: 'userId email name role createdAt',
  table: 'id baseId name description createdAt updatedAt',
  field: 'id tableId name type required options config indexed',
  record: 'id fields createdAt updatedAt',
  page: (item: string) => `items { ${item} } total page pageSize`,
};
