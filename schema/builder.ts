// The Pothos schema builder with scope-auth: loggedIn, systemAdmin, baseRole, app and the plugin scopes guard every operation.
import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin, { type AuthFailure } from '@pothos/plugin-scope-auth';
import { Kind, valueFromASTUntyped, type ValueNode } from 'graphql';
import { atLeast, type Role } from '../src/domain/access.js';
import type { Scope } from '../src/domain/apps.js';
import { forbidden, unauthorized } from '../src/errors.js';
import type { Context } from './context.js';
import {
  pluginScopes, type PluginBaseScope, type PluginEndpointScope, type PluginMethodScope, type PluginNetworkScope, type PluginRoleScope,
} from './plugin-gateway.js';

/** A base-role requirement; the base is named directly or through a table, field, workflow or webhook. */
export interface BaseRoleScope {
  role: Role;
  baseId?: string;
  tableId?: string;
  fieldId?: string;
  workflowId?: string;
  viewId?: string;
  webhookId?: string;
}

/** An application's access: the scope it needs and, for base resources, the base in its allow-list. */
export interface AppScope {
  scope: Scope;
  baseId?: string;
}

/** The first error a scope loader threw, in the order the scopes are listed (a map's failure holds its scopes' in order). */
function firstError(failure: AuthFailure): Error | undefined {
  if ('error' in failure && failure.error instanceof Error) return failure.error;
  for (const inner of 'failures' in failure ? failure.failures : []) {
    const found = firstError(inner);
    if (found) return found;
  }
  return undefined;
}

export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: {
    loggedIn: boolean; systemAdmin: boolean; baseRole: BaseRoleScope; app: AppScope;
    // Plugin checks of contract section 7 (schema/plugin-gateway.ts), listed by a field in the order they apply.
    pluginEnabled: string; pluginUi: string; pluginEndpoint: PluginEndpointScope; pluginBaseRole: PluginRoleScope;
    pluginInstalled: PluginBaseScope; pluginMethod: PluginMethodScope; pluginNetwork: PluginNetworkScope;
  };
  Scalars: { ID: { Input: string; Output: string | number }; JSON: { Input: unknown; Output: unknown } };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // A subscription is refused when it is made (an error, never a silently empty stream); each event is re-checked by the stream.
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      // The user-facing operations take user tokens only; applications use the Open API.
      loggedIn: ctx.actor?.kind === 'user',
      systemAdmin: ctx.actor?.kind === 'user' && ctx.actor.isAdmin,
      baseRole: async (scope: BaseRoleScope) => {
        // Users hold roles by membership; a workflow (never loggedIn or systemAdmin) is editor of its own base
        // only (access.roleIn); applications go through `app`.
        const actor = ctx.actor;
        if (actor?.kind !== 'user' && actor?.kind !== 'workflow') return false;
        // baseOf answers 404 for a base, table or field that does not exist.
        const baseId = await ctx.services.access.baseOf(scope);
        return atLeast(await ctx.services.access.roleIn(actor, baseId), scope.role);
      },
      // Throws the specific 401/403 of spec 1, 5.3 rather than a generic refusal.
      app: async (scope: AppScope) => !!(await ctx.services.openApi.authorize(ctx.actor, scope.scope, scope.baseId)),
      // Each throws its own code (PLUGIN_DISABLED, PERMISSION_DENIED, ENDPOINT_NOT_DECLARED, ...) as the plugin API answers.
      ...pluginScopes(ctx),
    }),
    // Loaders are asynchronous, so scope-auth runs a field's checks at once; it records each one's error, and the
    // caller is told the first in the order the field lists its scopes (the contract's order, e.g. PLUGIN_DISABLED
    // before ENDPOINT_NOT_DECLARED), not whichever answered first.
    treatErrorsAsUnauthorized: true,
    unauthorizedError: (_parent, ctx, _info, result) => firstError(result.failure) ?? (ctx.actor ? forbidden() : unauthorized()),
  },
});

function parseLiteral(ast: ValueNode, variables?: Record<string, unknown> | null): unknown {
  if (ast.kind === Kind.NULL) return null;
  return valueFromASTUntyped(ast, variables);
}

builder.scalarType('JSON', {
  description: 'Any JSON value',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral,
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
