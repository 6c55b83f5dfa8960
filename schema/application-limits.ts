// Charges an application's GraphQL operation to its rate limits, the same way at /graphql and at the Open API's REST door:
// one request, plus one record write per top-level field marked `recordWrite` (a document may write several times).
import { Kind, type DocumentNode, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from './context.js';

// Documents are parsed once and reused (route documents, yoga's parse cache), so their count is kept with them.
const counted = new WeakMap<DocumentNode, Map<string, number>>();

/** The record writes an operation makes: its top-level mutation fields whose definition says `recordWrite`. */
export function countRecordWrites(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): number {
  let byName = counted.get(document);
  if (!byName) counted.set(document, (byName = new Map()));
  const key = operationName ?? '';
  let n = byName.get(key);
  if (n === undefined) byName.set(key, (n = countWrites(schema, document, operationName)));
  return n;
}

function countWrites(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): number {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  const mutation = schema.getMutationType();
  if (!operation || operation.operation !== 'mutation' || !mutation) return 0;
  const fields = mutation.getFields();
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const seen = new Set<string>();
  const count = (set: SelectionSetNode): number => {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += fields[s.name.value]?.extensions?.recordWrite ? 1 : 0;
      else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        // The same fragment spread twice at one level merges into the same response keys: its fields run once.
        seen.add(s.name.value);
        const f = fragments.get(s.name.value);
        if (f) n += count(f.selectionSet);
      }
    }
    return n;
  };
  return count(operation.selectionSet);
}

const NONE: Promise<Record<string, string>> = Promise.resolve({});

/**
 * Charges the operation when an application runs it; resolves to the RateLimit-* headers, rejects with RATE_LIMITED past
 * a limit. Not an async function, so a caller that is no application pays no extra promise.
 */
export function chargeApplication(ctx: Context, schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Promise<Record<string, string>> {
  if (ctx.actor?.kind !== 'app') return NONE;
  return ctx.services.appLimits.charge(ctx.actor.id, countRecordWrites(schema, document, operationName));
}

/** The /graphql door's share: charge before executing; a refusal is the operation's only error (429 with Retry-After). */
export function useApplicationLimits(): Plugin {
  return {
    // Only an application's operation waits for the charge; everyone else's goes on synchronously, as before.
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as unknown as Context;
      if (ctx.actor?.kind !== 'app') return;
      return (async () => {
        try {
          const headers = await chargeApplication(ctx, args.schema, args.document, args.operationName);
          if (ctx.requestState) ctx.requestState.headers = { ...ctx.requestState.headers, ...headers };
        } catch (error) {
          setResultAndStopExecution({ errors: [error as GraphQLError] });
        }
      })();
    },
  };
}
