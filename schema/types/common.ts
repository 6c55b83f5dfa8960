// Types shared by several concepts: the builder's type parameters, delete results and page arguments.
import type { ObjectRef } from '@pothos/core';
import { builder } from '../builder.js';

/** The builder's schema types (context, scalars, scopes), for helpers that take a field or argument builder. */
export type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

export const DeleteResult = builder.objectRef<{ id: string; deleted: true }>('DeleteResult').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    deleted: t.exposeBoolean('deleted'),
  }),
});

/** A page of items with the same shape for every list. */
export function pageOf<T>(name: string, item: ObjectRef<BuilderTypes, T>) {
  return builder.objectRef<{ items: T[]; total: number; page: number; pageSize: number }>(`${name}Page`).implement({
    fields: (t) => ({
      items: t.field({ type: [item], resolve: (p) => p.items }),
      total: t.exposeInt('total'),
      page: t.exposeInt('page'),
      pageSize: t.exposeInt('pageSize'),
    }),
  });
}

/** `page` and `pageSize` arguments; pass the field builder's `t.arg`. */
export function pageArgs<A extends { int: (options: { required: false }) => unknown }>(arg: A) {
  return {
    page: arg.int({ required: false }) as ReturnType<A['int']>,
    pageSize: arg.int({ required: false }) as ReturnType<A['int']>,
  };
}
