// A yoga (envelop) plugin that executes /graphql documents compiled once by graphql-jit, as the REST routes are.
import type { Plugin } from 'graphql-yoga';
import type { DocumentNode, ExecutionResult } from 'graphql';
import { compileOperation, executeOperation, type CompiledOperation } from '../../schema/run-operation.js';
import type { GraphqlFastPath, GraphqlParams } from './fast-path.js';

/** `fastPath` learns the queries yoga ran, so their repeats can skip yoga (fast-path.ts). */
export function useCompiledOperations(fastPath?: Pick<GraphqlFastPath, 'learn'>): Plugin {
  // yoga's parse cache hands the same DocumentNode for the same text, so the document is the cache key.
  const cache = new WeakMap<DocumentNode, Map<string, CompiledOperation>>();
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args) => {
        let byName = cache.get(args.document);
        if (!byName) cache.set(args.document, (byName = new Map()));
        const name = args.operationName ?? '';
        let op = byName.get(name);
        if (!op) {
          byName.set(name, (op = compileOperation(args.schema, args.document, args.operationName)));
          fastPath?.learn((args.contextValue as { params?: GraphqlParams }).params, args.document, args.operationName, op);
        }
        // Refused variables go through yoga's own executor, whose errors yoga answers with 400.
        return executeOperation(op, args.contextValue, (args.variableValues ?? {}) as Record<string, unknown>, async () => executeFn(args) as ExecutionResult);
      });
    },
  };
}
