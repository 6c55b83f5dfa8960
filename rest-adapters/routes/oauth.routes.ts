// /api/oauth: the token endpoint (RFC 6749 client credentials), keys, discovery, and application administration.
import { openApp, openAudit, openBase, openPage, openToken, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { body } from './common.js';

const appBody = {
  app_name: { type: 'string', description: '1 to 100 characters' },
  callback_url: { type: 'string', description: 'An absolute http(s) URL' },
  allowed_bases: { type: 'array', items: { type: 'string' }, description: 'Base ids the application may access' },
  scopes: { type: 'array', items: { type: 'string' }, description: 'A non-empty subset of the six scopes' },
  is_active: { type: 'boolean', description: 'false disables the application' },
  rate_limit_per_minute: { type: 'integer', description: 'All Open API requests (default 600)' },
  write_rate_limit_per_minute: { type: 'integer', description: 'Record writes (default 300)' },
};
/**
 * AppInput's limits are GraphQL Ints (32-bit); the body schema takes any integer. Past the range the value is out of
 * the allowed 1 to 1000000 anyway, so it is clamped and the application service names the key as for any bad limit.
 */
const int32 = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? Math.max(Math.min(v, 2 ** 31 - 1), -(2 ** 31)) : v);
const appInput = (b: Record<string, unknown>) => ({
  appName: b.app_name, callbackUrl: b.callback_url, allowedBases: b.allowed_bases, scopes: b.scopes, isActive: b.is_active,
  rateLimitPerMinute: int32(b.rate_limit_per_minute), writeRateLimitPerMinute: int32(b.write_rate_limit_per_minute),
});
const withSecret = (r: { app: Record<string, unknown>; clientSecret: string }) => ({ ...openApp(r.app), client_secret: r.clientSecret });

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64; undefined when the header is not Basic. */
function basicCredentials(header: string | null): { id: string; secret: string } | null | undefined {
  const m = /^Basic\s+(\S+)$/i.exec(header?.trim() ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    const plus = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: plus(decoded.slice(0, colon)), secret: plus(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

const str = (v: unknown) => (v === undefined ? undefined : v);

export const oauthRoutes: Route[] = [
  {
    method: 'POST', path: '/api/oauth/token', family: 'token', tag: 'oauth', auth: false, bodyFormat: 'form',
    summary: 'Client credentials grant: form or JSON body; client authentication by HTTP Basic or in the body',
    body: {
      type: 'object',
      properties: { grant_type: { type: 'string' }, client_id: { type: 'string' }, client_secret: { type: 'string' }, scope: { type: 'string' } },
    },
    document: `mutation IssueAppToken($grantType: String, $clientId: String, $clientSecret: String, $scope: String, $basic: Boolean, $credentialsInBoth: Boolean) {
      issueAppToken(grantType: $grantType, clientId: $clientId, clientSecret: $clientSecret, scope: $scope, basic: $basic, credentialsInBoth: $credentialsInBoth) { accessToken tokenType expiresIn scope } }`,
    variables: ({ body: b, headers }) => {
      const basic = basicCredentials(headers.get('authorization'));
      const inBody = b.client_secret !== undefined || (b.client_id !== undefined && basic && b.client_id !== basic.id);
      return {
        grantType: str(b.grant_type), scope: str(b.scope),
        clientId: basic ? basic.id : basic === null ? undefined : str(b.client_id),
        clientSecret: basic ? basic.secret : basic === null ? undefined : str(b.client_secret),
        basic: basic !== undefined, credentialsInBoth: basic !== undefined && !!inBody,
      };
    },
    result: (d) => ({ access_token: d.issueAppToken.accessToken, token_type: d.issueAppToken.tokenType, expires_in: d.issueAppToken.expiresIn, scope: d.issueAppToken.scope }),
    response: ref('TokenResponse'),
  },
  {
    method: 'GET', path: '/api/oauth/jwks.json', family: 'raw', tag: 'oauth', auth: false, summary: 'Public keys that sign access tokens (RFC 7517)',
    document: 'query Jwks { jwks }',
    variables: () => ({}),
    result: (d) => d.jwks,
    response: { type: 'object', properties: { keys: { type: 'array', items: { type: 'object' } } }, required: ['keys'] },
  },
  {
    method: 'GET', path: '/.well-known/oauth-authorization-server', family: 'raw', tag: 'oauth', auth: false, summary: 'Authorization server metadata (RFC 8414)',
    document: 'query AuthorizationServerMetadata { authorizationServerMetadata }',
    variables: () => ({}),
    result: (d) => d.authorizationServerMetadata,
    response: { type: 'object', required: ['issuer', 'token_endpoint', 'jwks_uri', 'grant_types_supported', 'token_endpoint_auth_methods_supported', 'scopes_supported'] },
  },
  {
    method: 'GET', path: '/api/oauth/apps', family: 'open', tag: 'oauth-apps', summary: 'List applications (system administrators)',
    document: `query Apps { apps { ${SELECT.app} } }`,
    variables: () => ({}),
    result: (d) => d.apps.map(openApp),
    response: { type: 'array', items: ref('App') },
  },
  {
    method: 'POST', path: '/api/oauth/apps', family: 'open', tag: 'oauth-apps', status: 201,
    summary: 'Create an application; the answer holds the plaintext client_secret, shown this once',
    body: body(appBody, ['app_name', 'callback_url', 'scopes']),
    document: `mutation CreateApp($input: AppInput!) { createApp(input: $input) { clientSecret app { ${SELECT.app} } } }`,
    variables: ({ body: b }) => ({ input: appInput(b) }),
    result: (d) => withSecret(d.createApp),
    response: ref('AppWithSecret'),
  },
  {
    method: 'GET', path: '/api/oauth/apps/{app_id}', family: 'open', tag: 'oauth-apps', summary: 'One application',
    document: `query App($id: ID!) { app(id: $id) { ${SELECT.app} } }`,
    variables: ({ params }) => ({ id: params.app_id }),
    result: (d) => openApp(d.app),
    response: ref('App'),
  },
  {
    method: 'PUT', path: '/api/oauth/apps/{app_id}', family: 'open', tag: 'oauth-apps',
    summary: 'Change name, callback, bases, scopes, is_active (disable/enable) and rate limits; binds issued tokens at once',
    body: body(appBody),
    document: `mutation UpdateApp($id: ID!, $input: AppInput!) { updateApp(id: $id, input: $input) { ${SELECT.app} } }`,
    variables: ({ params, body: b }) => ({ id: params.app_id, input: appInput(b) }),
    result: (d) => openApp(d.updateApp),
    response: ref('App'),
  },
  {
    method: 'DELETE', path: '/api/oauth/apps/{app_id}', family: 'open', tag: 'oauth-apps', summary: 'Delete an application and revoke its tokens',
    document: 'mutation DeleteApp($id: ID!) { deleteApp(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.app_id }),
    result: (d) => d.deleteApp,
    response: ref('Deleted'),
  },
  {
    method: 'POST', path: '/api/oauth/apps/{app_id}/reset-secret', family: 'open', tag: 'oauth-apps',
    summary: 'Issue a new secret (shown once); the old one fails at once, issued tokens stay valid',
    document: `mutation ResetAppSecret($id: ID!) { resetAppSecret(id: $id) { clientSecret app { ${SELECT.app} } } }`,
    variables: ({ params }) => ({ id: params.app_id }),
    result: (d) => withSecret(d.resetAppSecret),
    response: ref('AppWithSecret'),
  },
  {
    method: 'GET', path: '/api/oauth/apps/{app_id}/tokens', family: 'open', tag: 'oauth-apps', summary: 'Tokens issued to the application, newest first',
    document: 'query AppTokens($appId: ID!) { appTokens(appId: $appId) { jti scope issuedAt expiresAt revoked revokedAt } }',
    variables: ({ params }) => ({ appId: params.app_id }),
    result: (d) => d.appTokens.map(openToken),
    response: { type: 'array', items: ref('Token') },
  },
  {
    method: 'POST', path: '/api/oauth/apps/{app_id}/tokens/revoke', family: 'open', tag: 'oauth-apps',
    summary: 'Revoke one token (jti) or every unexpired token of the application',
    body: body({ jti: { type: 'string' } }),
    document: 'mutation RevokeAppTokens($appId: ID!, $jti: String) { revokeAppTokens(appId: $appId, jti: $jti) { revoked } }',
    variables: ({ params, body: b }) => ({ appId: params.app_id, jti: b.jti }),
    result: (d) => d.revokeAppTokens,
    response: { type: 'object', properties: { revoked: { type: 'integer' } }, required: ['revoked'], additionalProperties: false },
  },
  {
    method: 'GET', path: '/api/oauth/apps/{app_id}/audit', family: 'open', tag: 'oauth-apps', paginated: true,
    summary: 'Audit log of the application, newest first, filterable by action',
    query: {
      page: { type: 'integer', description: 'Page number (default 1)' },
      per_page: { type: 'integer', description: 'Entries per page (default 20, at most 200)' },
      action: { type: 'string', description: 'Only this action, e.g. record.create, app.update, secret.reset, token.revoke' },
    },
    document: 'query AppAudit($appId: ID!, $page: Int, $perPage: Int, $action: String) { appAudit(appId: $appId, page: $page, perPage: $perPage, action: $action) { items { id appId action baseId tableId recordId requestId at detail } total page pageSize } }',
    variables: ({ params, query }) => ({ appId: params.app_id, page: query.page, perPage: query.per_page, action: query.action }),
    result: (d) => openPage(openAudit)(d.appAudit),
    response: { type: 'array', items: ref('AuditEntry') },
  },
  {
    method: 'GET', path: '/api/oauth/bases', family: 'open', tag: 'oauth-apps', summary: 'Every base, for choosing allowed_bases',
    document: 'query OauthBases { oauthBases { id name description createdAt updatedAt } }',
    variables: () => ({}),
    result: (d) => d.oauthBases.map(openBase),
    response: { type: 'array', items: ref('BaseSummary') },
  },
];
