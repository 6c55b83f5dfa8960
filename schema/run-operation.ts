// Runs GraphQL operations compiled to JavaScript once (graphql-jit): the REST routes, plugin data calls and /graphql
// all execute through here, with the caller's context, so every door passes the same scope checks.
import { execute, parse, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Context } from './context.js';

export interface CompiledOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  /** Null when graphql-jit cannot compile the document; it then runs on graphql-js. */
  compiled: CompiledQuery | null;
}

/** Compiles one operation of a validated document. */
export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CompiledOperation {
  // Built-in scalars and enums go out as the resolvers return them (null checks stay): the schema's TypeScript types
  // already hold them to their GraphQL types, and serialising each leaf allocated its error path up front (about a
  // fifth of a 100-record page's garbage).
  const result = compileQuery(schema, document, operationName ?? undefined, { disableLeafSerialization: true });
  return { schema, document, compiled: isCompiledQuery(result) ? result : null };
}

/**
 * Executes a compiled operation. Variables that the compiled code refused (no resolver ran) go through graphql-js
 * instead (or through `fallback`), whose messages name the input path that was wrong.
 */
export async function executeOperation(
  op: CompiledOperation, contextValue: unknown, variables: Record<string, unknown>,
  fallback = () => execute({ schema: op.schema, document: op.document, variableValues: variables, contextValue }) as Promise<ExecutionResult>,
): Promise<ExecutionResult> {
  if (!op.compiled) return fallback();
  const result = (await op.compiled.query(undefined, contextValue, variables)) as ExecutionResult;
  if (result.errors?.length && !result.data && result.errors.every((e) => !e.path && !e.originalError)) return fallback();
  return result;
}

const compiledBySchema = new WeakMap<GraphQLSchema, Map<string, CompiledOperation>>();

/** Runs an operation given as source text in process (plugin data calls); throws its first error. */
export async function runOperation<T = any>(schema: GraphQLSchema, ctx: Context, source: string, variables: Record<string, unknown> = {}): Promise<T> {
  let bySource = compiledBySchema.get(schema);
  if (!bySource) compiledBySchema.set(schema, (bySource = new Map()));
  let op = bySource.get(source);
  if (!op) bySource.set(source, (op = compileOperation(schema, parse(source))));
  const result = await executeOperation(op, ctx, definedOnly(variables));
  if (result.errors?.length) throw result.errors[0].originalError ?? result.errors[0];
  return result.data as T;
}

/**
 * The variables without `undefined` keys, at every depth of plain objects: graphql-js treats an `undefined` input field as
 * absent, graphql-jit as null, and absent must stay absent (a partial update changes only what it names).
 */
export function definedOnly<T extends Record<string, unknown>>(value: T): T {
  let out: Record<string, unknown> | undefined;
  const keys = Object.keys(value);
  keys.forEach((key, i) => {
    const v = value[key];
    const kept = v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype ? definedOnly(v as Record<string, unknown>) : v;
    if (!out && (kept === undefined || kept !== v)) {
      out = {};
      // A record's values may hold a field named "__proto__": copied as an own property, never as the prototype.
      for (const k of keys.slice(0, i)) Object.defineProperty(out, k, { value: value[k], enumerable: true, writable: true, configurable: true });
    }
    if (out && kept !== undefined) Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
  });
  return (out ?? value) as T;
}
