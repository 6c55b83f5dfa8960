// /api/v1/users: user administration for system administrators.
import { restPage, restUser, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const userBody = {
  email: { type: 'string', description: 'Unique, case-insensitive' },
  name: { type: 'string' },
  password: { type: 'string', description: 'At least 8 characters' },
  is_admin: { type: 'boolean' },
};

export const userRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/users', family: 'v1', tag: 'users', summary: 'List users (system administrators)',
    query: pageQuery(20),
    document: `query Users($page: Int, $pageSize: Int) { users(page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.user)} } }`,
    variables: ({ query }) => pageVars(query),
    result: (d) => restPage(restUser)(d.users),
    response: pageSchema('User'),
  },
  {
    method: 'POST', path: '/api/v1/users', family: 'v1', tag: 'users', summary: 'Create a user; each user gets a default base "My base"', status: 201,
    body: body(userBody, ['email', 'name', 'password']),
    document: `mutation CreateUser($input: CreateUserInput!) { createUser(input: $input) { ${SELECT.user} } }`,
    variables: ({ body: b }) => ({ input: { email: b.email, name: b.name, password: b.password, isAdmin: b.is_admin } }),
    result: (d) => restUser(d.createUser),
    response: ref('User'),
  },
  {
    method: 'GET', path: '/api/v1/users/{user_id}', family: 'v1', tag: 'users', summary: 'One user',
    document: `query User($id: ID!) { user(id: $id) { ${SELECT.user} } }`,
    variables: ({ params }) => ({ id: params.user_id }),
    result: (d) => restUser(d.user),
    response: ref('User'),
  },
  {
    method: 'PUT', path: '/api/v1/users/{user_id}', family: 'v1', tag: 'users', summary: 'Change a user; absent keys stay as they are',
    body: body(userBody),
    document: `mutation UpdateUser($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${SELECT.user} } }`,
    variables: ({ params, body: b }) => ({ id: params.user_id, input: { email: b.email, name: b.name, password: b.password, isAdmin: b.is_admin } }),
    result: (d) => restUser(d.updateUser),
    response: ref('User'),
  },
  {
    method: 'DELETE', path: '/api/v1/users/{user_id}', family: 'v1', tag: 'users', summary: 'Delete a user (not the last system administrator)',
    document: 'mutation DeleteUser($id: ID!) { deleteUser(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.user_id }),
    result: (d) => d.deleteUser,
    response: deleted,
  },
];
