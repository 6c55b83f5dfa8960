// Runs a GraphQL operation in process with the caller's context, so plugin data calls pass the same scope checks as any request.
import { execute, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Context } from './context.js';

const documents = new Map<string, DocumentNode>();

export async function runOperation<T = any>(schema: GraphQLSchema, ctx: Context, source: string, variables: Record<string, unknown> = {}): Promise<T> {
  let document = documents.get(source);
  if (!document) documents.set(source, (document = parse(source)));
  const defined = Object.fromEntries(Object.entries(variables).filter(([, v]) => v !== undefined));
  const result = await execute({ schema, document, variableValues: defined, contextValue: ctx });
  if (result.errors?.length) throw result.errors[0].originalError ?? result.errors[0];
  return result.data as T;
}
