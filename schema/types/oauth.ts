// OAuth applications: administration (system administrators), the client-credentials grant, keys and discovery.
import type { AppRow, IssuedToken, TokenInfo } from '../../src/domain/apps.js';
import type { AuditEntry } from '../../src/domain/audit.js';
import { builder } from '../builder.js';
import { DeleteResult, pageOf } from './common.js';

export const App = builder.objectRef<AppRow>('App').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    appName: t.exposeString('appName'),
    clientId: t.exposeString('clientId'),
    callbackUrl: t.exposeString('callbackUrl'),
    allowedBases: t.exposeStringList('allowedBases'),
    scopes: t.exposeStringList('scopes'),
    isActive: t.exposeBoolean('isActive'),
    rateLimitPerMinute: t.exposeInt('rateLimitPerMinute'),
    writeRateLimitPerMinute: t.exposeInt('writeRateLimitPerMinute'),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});

const AppWithSecret = builder.objectRef<{ app: AppRow; clientSecret: string }>('AppWithSecret').implement({
  description: 'An application with its plaintext secret: only in the answers of create and reset-secret',
  fields: (t) => ({
    app: t.field({ type: App, resolve: (r) => r.app }),
    clientSecret: t.exposeString('clientSecret'),
  }),
});

const AppToken = builder.objectRef<TokenInfo>('AppToken').implement({
  fields: (t) => ({
    jti: t.exposeID('jti'),
    scope: t.exposeString('scope'),
    issuedAt: t.exposeString('issuedAt'),
    expiresAt: t.exposeString('expiresAt'),
    revoked: t.exposeBoolean('revoked'),
    revokedAt: t.exposeString('revokedAt', { nullable: true }),
  }),
});

const AuditEntryRef = builder.objectRef<AuditEntry>('AuditEntry').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    appId: t.exposeID('appId'),
    action: t.exposeString('action'),
    baseId: t.exposeString('baseId', { nullable: true }),
    tableId: t.exposeString('tableId', { nullable: true }),
    recordId: t.exposeString('recordId', { nullable: true }),
    requestId: t.exposeString('requestId', { nullable: true }),
    at: t.exposeString('at'),
    detail: t.field({ type: 'JSON', nullable: true, resolve: (e) => e.detail }),
  }),
});
const AuditPage = pageOf<AuditEntry>('AuditEntry', AuditEntryRef);

const TokenResponse = builder.objectRef<IssuedToken>('TokenResponse').implement({
  fields: (t) => ({
    accessToken: t.exposeString('accessToken'),
    tokenType: t.exposeString('tokenType'),
    expiresIn: t.exposeInt('expiresIn'),
    scope: t.exposeString('scope'),
  }),
});

const BaseSummary = builder.objectRef<{ id: string; name: string; description: string; createdAt: string; updatedAt: string }>('BaseSummary').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});

/**
 * A new application (appName, callbackUrl and scopes required) or the keys of one to change; the application service
 * checks every value and names the one that is wrong. `scopes` are the six OAuth scope strings (base:read, table:read,
 * field:read, record:read, record:write, table:write): a GraphQL enum cannot spell them (':'), and the web app and the
 * REST doors send and show them as they are.
 */
const AppInput = builder.inputType('AppInput', {
  fields: (t) => ({
    appName: t.string({ required: false, description: '1 to 100 characters' }),
    callbackUrl: t.string({ required: false, description: 'An absolute http(s) URL' }),
    allowedBases: t.idList({ required: false, description: 'Base ids the application may access' }),
    scopes: t.stringList({ required: false, description: 'A non-empty subset of the six scopes' }),
    isActive: t.boolean({ required: false, description: 'false disables the application' }),
    rateLimitPerMinute: t.int({ required: false, description: 'All Open API requests, 1 to 1000000 (default 600)' }),
    writeRateLimitPerMinute: t.int({ required: false, description: 'Record writes, 1 to 1000000 (default 300)' }),
  }),
});

const admin = { systemAdmin: true } as const;

builder.queryFields((t) => ({
  apps: t.field({ type: [App], authScopes: admin, resolve: (_r, _a, ctx) => ctx.services.apps.listApps() }),
  app: t.field({
    type: App, authScopes: admin, args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.getApp(a.id),
  }),
  appTokens: t.field({
    type: [AppToken], authScopes: admin, description: 'Tokens issued to an application, newest first',
    args: { appId: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.listTokens(a.appId),
  }),
  appAudit: t.field({
    type: AuditPage, authScopes: admin, description: 'Audit entries of an application, newest first',
    args: { appId: t.arg.id({ required: true }), page: t.arg.int({ required: false }), perPage: t.arg.int({ required: false }), action: t.arg.string({ required: false }) },
    resolve: async (_r, a, ctx) => {
      await ctx.services.apps.getApp(a.appId);
      return ctx.services.audit.listAudit(a.appId, a);
    },
  }),
  oauthBases: t.field({
    type: [BaseSummary], authScopes: admin, description: 'Every base, for choosing allowed_bases',
    resolve: async (_r, _a, ctx) => (await ctx.services.bases.listBases(ctx.actor!, 1, 1000)).items,
  }),
  jwks: t.field({ type: 'JSON', description: 'The public signing keys (RFC 7517)', resolve: (_r, _a, ctx) => ({ keys: [ctx.services.keys.publicJwk] }) }),
  authorizationServerMetadata: t.field({
    type: 'JSON', description: 'RFC 8414 metadata',
    resolve: (_r, _a, ctx) => ctx.services.apps.serverMetadata(),
  }),
}));

builder.mutationFields((t) => ({
  createApp: t.field({
    type: AppWithSecret, authScopes: admin, args: { input: t.arg({ type: AppInput, required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.createApp(a.input, ctx.requestId),
  }),
  updateApp: t.field({
    type: App, authScopes: admin, args: { id: t.arg.id({ required: true }), input: t.arg({ type: AppInput, required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.updateApp(a.id, a.input, ctx.requestId),
  }),
  deleteApp: t.field({
    type: DeleteResult, authScopes: admin, args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.deleteApp(a.id, ctx.requestId),
  }),
  resetAppSecret: t.field({
    type: AppWithSecret, authScopes: admin, args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.apps.resetSecret(a.id, ctx.requestId),
  }),
  revokeAppTokens: t.field({
    type: builder.objectRef<{ revoked: number }>('RevokeResult').implement({ fields: (f) => ({ revoked: f.exposeInt('revoked') }) }),
    authScopes: admin,
    description: 'Revokes one token (jti) or every unexpired token of the application',
    args: { appId: t.arg.id({ required: true }), jti: t.arg.string({ required: false }) },
    resolve: (_r, a, ctx) => ctx.services.apps.revokeTokens(a.appId, a.jti, ctx.requestId),
  }),
  issueAppToken: t.field({
    type: TokenResponse,
    description: 'The OAuth 2.0 client-credentials grant (POST /api/oauth/token)',
    args: {
      grantType: t.arg.string({ required: false }),
      clientId: t.arg.string({ required: false }),
      clientSecret: t.arg.string({ required: false }),
      scope: t.arg.string({ required: false }),
      basic: t.arg.boolean({ required: false, description: 'The credentials came by HTTP Basic' }),
      credentialsInBoth: t.arg.boolean({ required: false, description: 'HTTP Basic and body credentials came together' }),
    },
    resolve: (_r, a, ctx) => ctx.services.apps.issueToken(a),
  }),
}));
