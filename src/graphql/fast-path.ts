// A shorter way through /graphql for its commonest request: a query yoga has already parsed, validated and run once,
// POSTed as plain JSON by a user. It runs the same compiled operation (use-compiled-operations.ts) with the same context
// and answers what yoga would, without yoga's request pipeline (about 150 µs of CPU a page of 100 records). Anything
// else goes to yoga: other methods, bodies and Accept values, mutations, applications (their rate limits are charged in
// yoga), and every answer with errors (a query changes nothing, so yoga running it again answers it as before).
import { getOperationAST, type DocumentNode } from 'graphql';
import { getCORSHeadersByRequestAndOptions } from '@whatwg-node/server';
import { Response as FetchResponse } from '@whatwg-node/fetch';
import { executeOperation, type CompiledOperation } from '../../schema/run-operation.js';
import type { Context } from '../../schema/context.js';
import type { RequestState } from '../log.js';
import { withBody } from './body-limit.js';

/** Query texts remembered: enough for every document of the web app and its clients, bounded against odd callers. */
const MAX_KNOWN = 1000;
/** Accept values for which yoga answers `application/json` with nothing else to negotiate. */
const PLAIN_ACCEPT = new Set(['*/*', 'application/json', 'application/json; charset=utf-8']);
/** Thrown by the fallback when the compiled code refused the variables (no resolver ran): yoga words that error. */
const DECLINED = Symbol('declined');

export interface GraphqlParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
}

export function createGraphqlFastPath(contextFor: (request: Request, state: RequestState) => Promise<Context>) {
  /** Query text → operation name ('' for none) → the compiled operation yoga ran. */
  const known = new Map<string, Map<string, CompiledOperation>>();
  let served = 0;

  return {
    /** How many requests it answered (for tests). */
    served: () => served,

    /** Called by use-compiled-operations when yoga executes a validated document: queries are remembered. */
    learn(params: GraphqlParams | undefined, document: DocumentNode, operationName: string | null | undefined, op: CompiledOperation) {
      if (!params || typeof params.query !== 'string' || params.extensions !== undefined || !op.compiled) return;
      if (getOperationAST(document, operationName)?.operation !== 'query') return;
      let byName = known.get(params.query);
      if (!byName) {
        if (known.size >= MAX_KNOWN) return;
        known.set(params.query, (byName = new Map()));
      }
      byName.set(operationName ?? '', op);
    },

    /** The answer, or the request to hand yoga (a new one when the body had to be read). */
    async run(request: Request, state: RequestState): Promise<{ answer: Response } | { request: Request }> {
      const accept = request.headers.get('accept');
      if (request.method !== 'POST' || !known.size || !request.headers.get('content-type')?.startsWith('application/json')
        || (accept !== null && !PLAIN_ACCEPT.has(accept))) return { request };
      const text = await request.text();
      const declined = () => ({ request: withBody(request, text) });
      let params: GraphqlParams;
      try {
        params = JSON.parse(text) as GraphqlParams;
      } catch {
        return declined();
      }
      if (!params || typeof params !== 'object' || typeof params.query !== 'string' || params.extensions !== undefined) return declined();
      const { variables, operationName } = params;
      if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return declined();
      if (operationName != null && typeof operationName !== 'string') return declined();
      const op = known.get(params.query)?.get(operationName ?? '');
      if (!op) return declined();
      // Whatever fails here (a bad token makes the context throw; refused variables) yoga answers in its own words.
      let result;
      try {
        const ctx = await contextFor(request, state);
        if (ctx.actor?.kind === 'app') return declined();
        // The context yoga would build: its own fields, then ours.
        const contextValue = { requestState: state, request, params, ...ctx };
        result = await executeOperation(op, contextValue, (variables ?? {}) as Record<string, unknown>, () => {
          throw DECLINED;
        });
      } catch {
        return declined();
      }
      if (result.errors?.length) return declined();
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...getCORSHeadersByRequestAndOptions(request, {}) };
      served++;
      return { answer: new FetchResponse(JSON.stringify({ data: result.data }), { status: 200, headers }) };
    },
  };
}

export type GraphqlFastPath = ReturnType<typeof createGraphqlFastPath>;
