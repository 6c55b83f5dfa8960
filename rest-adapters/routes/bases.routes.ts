// /api/v1/bases: bases and their members.
import { restBase, restMember, restPage, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const baseBody = { name: { type: 'string' }, description: { type: 'string' } };

export const baseRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/bases', family: 'v1', tag: 'bases', summary: 'Bases the caller is a member of (every base for a system administrator)',
    query: pageQuery(20),
    document: `query Bases($page: Int, $pageSize: Int) { bases(page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.base)} } }`,
    variables: ({ query }) => pageVars(query),
    result: (d) => restPage(restBase)(d.bases),
    response: pageSchema('Base'),
  },
  {
    method: 'POST', path: '/api/v1/bases', family: 'v1', tag: 'bases', summary: 'Create a base; the creator becomes its owner', status: 201,
    body: body(baseBody, ['name']),
    document: `mutation CreateBase($name: String!, $description: String) { createBase(name: $name, description: $description) { ${SELECT.base} } }`,
    variables: ({ body: b }) => ({ name: b.name, description: b.description }),
    result: (d) => restBase(d.createBase),
    response: ref('Base'),
  },
  {
    method: 'GET', path: '/api/v1/bases/{base_id}', family: 'v1', tag: 'bases', summary: 'One base',
    document: `query Base($id: ID!) { base(id: $id) { ${SELECT.base} } }`,
    variables: ({ params }) => ({ id: params.base_id }),
    result: (d) => restBase(d.base),
    response: ref('Base'),
  },
  {
    method: 'PUT', path: '/api/v1/bases/{base_id}', family: 'v1', tag: 'bases', summary: 'Rename or describe a base (admin)',
    body: body(baseBody),
    document: `mutation UpdateBase($id: ID!, $name: String, $description: String) { updateBase(id: $id, name: $name, description: $description) { ${SELECT.base} } }`,
    variables: ({ params, body: b }) => ({ id: params.base_id, name: b.name, description: b.description }),
    result: (d) => restBase(d.updateBase),
    response: ref('Base'),
  },
  {
    method: 'DELETE', path: '/api/v1/bases/{base_id}', family: 'v1', tag: 'bases', summary: 'Delete a base with all its tables (owner)',
    document: 'mutation DeleteBase($id: ID!) { deleteBase(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.base_id }),
    result: (d) => d.deleteBase,
    response: deleted,
  },
  {
    method: 'GET', path: '/api/v1/bases/{base_id}/members', family: 'v1', tag: 'bases', summary: 'Members of a base with their roles',
    document: `query Members($baseId: ID!) { members(baseId: $baseId) { ${SELECT.member} } }`,
    variables: ({ params }) => ({ baseId: params.base_id }),
    result: (d) => d.members.map(restMember),
    response: { type: 'array', items: ref('Member') },
  },
  {
    method: 'PUT', path: '/api/v1/bases/{base_id}/members/{user_id}', family: 'v1', tag: 'bases',
    summary: 'Add a member or change a role (admin; only an owner grants or changes owner)',
    body: body({ role: { enum: ['owner', 'admin', 'editor', 'viewer'] } }, ['role']),
    document: `mutation SetMember($baseId: ID!, $userId: ID!, $role: String!) { setMember(baseId: $baseId, userId: $userId, role: $role) { ${SELECT.member} } }`,
    variables: ({ params, body: b }) => ({ baseId: params.base_id, userId: params.user_id, role: b.role }),
    result: (d) => restMember(d.setMember),
    response: ref('Member'),
  },
  {
    method: 'DELETE', path: '/api/v1/bases/{base_id}/members/{user_id}', family: 'v1', tag: 'bases', summary: 'Remove a member (a base keeps one owner)',
    document: 'mutation RemoveMember($baseId: ID!, $userId: ID!) { removeMember(baseId: $baseId, userId: $userId) { userId removed } }',
    variables: ({ params }) => ({ baseId: params.base_id, userId: params.user_id }),
    result: (d) => ({ user_id: d.removeMember.userId, removed: d.removeMember.removed }),
    response: { type: 'object', properties: { user_id: { type: 'string' }, removed: { const: true } }, required: ['user_id', 'removed'], additionalProperties: false },
  },
];
