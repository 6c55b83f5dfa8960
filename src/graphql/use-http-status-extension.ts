// Yoga plugin: keeps `extensions.http.status` in serialised GraphQL errors (contract section 8).
// Yoga strips `extensions.http` when it writes a result; a result's own `stringify` runs after that, so it puts the status back.
import type { Plugin } from 'graphql-yoga';

type ErrorLike = { extensions?: Record<string, unknown>; toJSON?: () => Record<string, unknown> };

export function useHttpStatusExtension(): Plugin {
  return {
    onResultProcess({ result }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || !('errors' in result) || !result.errors?.length) return;
      const statuses = (result.errors as unknown as ErrorLike[]).map((e) => (e.extensions?.http as { status?: number } | undefined)?.status);
      (result as { stringify?: (r: unknown) => string }).stringify = (sanitized: any) =>
        JSON.stringify({
          ...sanitized,
          errors: sanitized.errors.map((e: ErrorLike, i: number) => {
            const plain = typeof e.toJSON === 'function' ? e.toJSON() : e;
            const status = statuses[i];
            return status ? { ...plain, extensions: { ...(plain.extensions as object), http: { status } } } : plain;
          }),
        });
    },
  };
}
