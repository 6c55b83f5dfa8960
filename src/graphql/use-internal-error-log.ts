// Yoga plugin: hands the cause of a masked internal error to the request's record, so its access line logs it
// with the request_id the client got (the client sees only "Internal error").
import type { Plugin } from 'graphql-yoga';
import type { RequestState } from '../log.js';

type Failed = { extensions?: { code?: unknown }; originalError?: unknown };

export function useInternalErrorLog(): Plugin<Record<string, unknown>, { requestState?: RequestState }> {
  return {
    onResultProcess({ result, serverContext }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || !('errors' in result) || !serverContext.requestState) return;
      const internal = (result.errors as Failed[] | undefined)?.find((e) => e.extensions?.code === 'INTERNAL_ERROR' && e.originalError);
      if (internal) serverContext.requestState.error = internal.originalError;
    },
  };
}
