// Users, login and logout.
import type { UserActor } from '../../src/domain/deps.js';
import type { User as UserShape } from '../../src/domain/users.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

export const User = builder.objectRef<UserShape>('User').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    isAdmin: t.exposeBoolean('isAdmin'),
    defaultBaseId: t.exposeID('defaultBaseId', { nullable: true }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});
const UserPage = pageOf<UserShape>('User', User);

const LoginResult = builder.objectRef<{ token: string; tokenType: string; expiresIn: number; user: UserShape }>('LoginResult').implement({
  fields: (t) => ({
    token: t.exposeString('token'),
    tokenType: t.exposeString('tokenType'),
    expiresIn: t.exposeInt('expiresIn'),
    user: t.field({ type: User, resolve: (r) => r.user }),
  }),
});

const LogoutResult = builder.objectRef<{ loggedOut: true }>('LogoutResult').implement({
  fields: (t) => ({ loggedOut: t.exposeBoolean('loggedOut') }),
});

const CreateUserInput = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    name: t.string({ required: true }),
    password: t.string({ required: true }),
    isAdmin: t.boolean({ required: false }),
  }),
});
const UpdateUserInput = builder.inputType('UpdateUserInput', {
  fields: (t) => ({
    email: t.string({ required: false }),
    name: t.string({ required: false }),
    password: t.string({ required: false }),
    isAdmin: t.boolean({ required: false }),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: User,
    authScopes: { loggedIn: true },
    resolve: (_r, _a, ctx) => ctx.services.users.getUser(ctx.actor!.id),
  }),
  users: t.field({
    type: UserPage,
    authScopes: { systemAdmin: true },
    args: pageArgs(t.arg),
    resolve: (_r, a, ctx) => ctx.services.users.listUsers(a.page, a.pageSize),
  }),
  user: t.field({
    type: User,
    authScopes: { systemAdmin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.users.getUser(a.id),
  }),
}));

builder.mutationFields((t) => ({
  login: t.field({
    type: LoginResult,
    args: { email: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.login(a.email, a.password, ctx.clientAddress),
  }),
  logout: t.field({
    type: LogoutResult,
    authScopes: { loggedIn: true },
    resolve: (_r, _a, ctx) => ctx.services.auth.logout(ctx.actor as UserActor),
  }),
  createUser: t.field({
    type: User,
    authScopes: { systemAdmin: true },
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: (_r, a, ctx) => ctx.services.users.createUser(a.input),
  }),
  updateUser: t.field({
    type: User,
    authScopes: { systemAdmin: true },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateUserInput, required: true }) },
    resolve: (_r, a, ctx) => ctx.services.users.updateUser(a.id, a.input),
  }),
  deleteUser: t.field({
    type: DeleteResult,
    authScopes: { systemAdmin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.users.deleteUser(a.id),
  }),
}));
