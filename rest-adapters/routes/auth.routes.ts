// /api/auth: login, the current user, logout.
import { restUser, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { body } from './common.js';

export const authRoutes: Route[] = [
  {
    method: 'POST', path: '/api/auth/login', family: 'v1', tag: 'auth', auth: false,
    summary: 'Log in with email and password; returns a user token (24 h)',
    body: body({ email: { type: 'string' }, password: { type: 'string' } }, ['email', 'password']),
    document: `mutation Login($email: String!, $password: String!) { login(email: $email, password: $password) { token tokenType expiresIn user { ${SELECT.user} } } }`,
    variables: ({ body: b }) => ({ email: b.email, password: b.password }),
    result: (d) => ({ token: d.login.token, token_type: d.login.tokenType, expires_in: d.login.expiresIn, user: restUser(d.login.user) }),
    response: ref('Login'),
  },
  {
    method: 'GET', path: '/api/auth/me', family: 'v1', tag: 'auth', summary: 'The user behind the token',
    document: `query Me { me { ${SELECT.user} } }`,
    variables: () => ({}),
    result: (d) => restUser(d.me),
    response: ref('User'),
  },
  {
    method: 'POST', path: '/api/auth/logout', family: 'v1', tag: 'auth', summary: 'Revoke the token of this request',
    document: 'mutation Logout { logout { loggedOut } }',
    variables: () => ({}),
    result: (d) => ({ logged_out: d.logout.loggedOut }),
    response: { type: 'object', properties: { logged_out: { const: true } }, required: ['logged_out'], additionalProperties: false },
  },
];
