// Pieces shared by the v1 route files: page parameters and body schema helpers.
import type { JsonSchema, QueryParam } from '../route.js';

export const pageQuery = (defaultSize: number, max = 1000): Record<string, QueryParam> => ({
  page: { type: 'integer', description: 'Page number, from 1 (default 1)' },
  page_size: { type: 'integer', description: `Items per page (default ${defaultSize}; above ${max} it is clamped to ${max})` },
});

export const pageVars = (q: Record<string, unknown>) => ({ page: q.page, pageSize: q.page_size });

export const body = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object', properties, required, additionalProperties: false,
});

export const deleted = { $ref: '#/components/schemas/Deleted' };
