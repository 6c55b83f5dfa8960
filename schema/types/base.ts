// Bases and their members.
import { ROLES } from '../../src/domain/access.js';
import type { Base as BaseShape, Member as MemberShape } from '../../src/domain/bases.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

/** A role in a base, lowest first; the names are the wire values of every door. */
export const BaseRole = builder.enumType('BaseRole', {
  description: 'A role in a base: viewer < editor < admin < owner',
  values: ROLES,
});

export const Base = builder.objectRef<BaseShape>('Base').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    role: t.expose('role', { type: BaseRole, description: "The caller's role in the base" }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});
const BasePage = pageOf<BaseShape>('Base', Base);

const Member = builder.objectRef<MemberShape>('Member').implement({
  fields: (t) => ({
    userId: t.exposeID('userId'),
    email: t.exposeString('email'),
    name: t.exposeString('name'),
    role: t.expose('role', { type: BaseRole }),
    createdAt: t.exposeString('createdAt'),
  }),
});

const RemoveMemberResult = builder.objectRef<{ userId: string; removed: true }>('RemoveMemberResult').implement({
  fields: (t) => ({ userId: t.exposeID('userId'), removed: t.exposeBoolean('removed') }),
});

builder.queryFields((t) => ({
  bases: t.field({
    type: BasePage,
    authScopes: { loggedIn: true },
    args: pageArgs(t.arg),
    resolve: (_r, a, ctx) => ctx.services.bases.listBases(ctx.actor!, a.page, a.pageSize),
  }),
  base: t.field({
    type: Base,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.id, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.getBase(ctx.actor!, a.id),
  }),
  members: t.field({
    type: [Member],
    args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.listMembers(ctx.actor!, a.baseId),
  }),
}));

builder.mutationFields((t) => ({
  createBase: t.field({
    type: Base,
    authScopes: { loggedIn: true },
    args: { name: t.arg.string({ required: true }), description: t.arg.string({ required: false }) },
    resolve: (_r, a, ctx) => ctx.services.bases.createBase(ctx.actor!, a),
  }),
  updateBase: t.field({
    type: Base,
    args: { id: t.arg.id({ required: true }), name: t.arg.string({ required: false }), description: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.updateBase(ctx.actor!, a.id, a),
  }),
  deleteBase: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.id, role: 'owner' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.deleteBase(ctx.actor!, a.id),
  }),
  setMember: t.field({
    type: Member,
    args: {
      baseId: t.arg.id({ required: true }),
      userId: t.arg.id({ required: true }),
      // A String, not BaseRole: GraphQL callers (and tests) send it as a string literal, and the base service names
      // an unknown role in its 400. Values: owner, admin, editor, viewer.
      role: t.arg.string({ required: true, description: 'A BaseRole value: owner, admin, editor or viewer' }),
    },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.setMember(ctx.actor!, a.baseId, a.userId, a.role),
  }),
  removeMember: t.field({
    type: RemoveMemberResult,
    args: { baseId: t.arg.id({ required: true }), userId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.removeMember(ctx.actor!, a.baseId, a.userId),
  }),
}));
