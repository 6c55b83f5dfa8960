// Bases and their members.
import type { Base as BaseShape, Member as MemberShape } from '../../src/domain/bases.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

export const Base = builder.objectRef<BaseShape>('Base').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    role: t.exposeString('role', { description: "The caller's role in the base" }),
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
    role: t.exposeString('role'),
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
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.id), role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.getBase(ctx.actor!, String(a.id)),
  }),
  members: t.field({
    type: [Member],
    args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.listMembers(ctx.actor!, String(a.baseId)),
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
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.id), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.updateBase(ctx.actor!, String(a.id), a),
  }),
  deleteBase: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.id), role: 'owner' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.deleteBase(ctx.actor!, String(a.id)),
  }),
  setMember: t.field({
    type: Member,
    args: { baseId: t.arg.id({ required: true }), userId: t.arg.id({ required: true }), role: t.arg.string({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.setMember(ctx.actor!, String(a.baseId), String(a.userId), a.role),
  }),
  removeMember: t.field({
    type: RemoveMemberResult,
    args: { baseId: t.arg.id({ required: true }), userId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: String(a.baseId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.bases.removeMember(ctx.actor!, String(a.baseId), String(a.userId)),
  }),
}));
