// Generates an OpenAPI 3.1 document from the REST route table.
import type { Route } from './route.js';
import { v1Schemas } from './schemas.js';

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Bad request: the message names the field, parameter or batch index',
  '401': 'Missing or invalid token',
  '403': 'Not allowed for this caller',
  '404': 'Not found',
  '405': 'Method not allowed',
  '409': 'Conflict (also: the same Idempotency-Key while its first request runs)',
  '413': 'Body too large',
  '429': 'Too many requests',
  '500': 'Internal error',
  '502': 'A plugin endpoint or upstream failed (ENDPOINT_FAILED, RESPONSE_TOO_LARGE)',
  '504': 'A plugin endpoint or upstream timed out (TIMEOUT, UPSTREAM_TIMEOUT)',
};

export function buildOpenApi(routes: Route[], info: { title: string; version: string; serverUrl: string; schemas?: Record<string, unknown> }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1], in: 'path', required: true, schema: { type: 'string' },
    }));
    const queryParams = Object.entries(route.query ?? {}).map(([name, q]) => ({
      name, in: 'query', required: q.required ?? false, description: q.description, schema: { type: q.type },
    }));
    // Contract section 14: writes under /api/v1 and /api/open/v1 take an Idempotency-Key.
    const idempotent = route.method !== 'GET' && /^\/api\/(v1|open\/v1)\//.test(route.path);
    const headerParams = idempotent ? [{
      name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Replays the first answer (24 h, per caller) with Idempotent-Replayed: true; 422 for another request, 409 while the first runs',
    }] : [];
    const status = String(route.status ?? 200);
    const operation: Record<string, unknown> = {
      operationId: operationId(route),
      summary: route.summary,
      tags: [route.tag],
      parameters: [...pathParams, ...queryParams, ...headerParams],
      responses: {
        [status]: {
          description: 'Success',
          content: { 'application/json': { schema: envelope(route) } },
        },
        ...Object.fromEntries(Object.entries({ ...ERROR_STATUSES, ...(idempotent ? { '422': 'The Idempotency-Key was used for another request (IDEMPOTENCY_KEY_REUSED)' } : {}) }).map(([code, description]) => [
          code, { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.family === 'token' ? 'TokenError' : 'Error'}` } } } },
        ])),
      },
      ...(route.auth === false ? { security: [] } : {}),
    };
    if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
    if (route.bodyFormat === 'spool') {
      operation.requestBody = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object', required: ['file'],
              properties: { file: { type: 'string', format: 'binary' }, options: { type: 'string', description: 'JSON options' } },
            },
          },
        },
      };
    }
    if (route.download) {
      operation.responses = {
        ...(operation.responses as Record<string, unknown>),
        '200': {
          description: 'The file, streamed (a header row of field names, then every record)',
          content: { 'text/csv': { schema: { type: 'string' } }, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } } },
        },
      };
    }
    if (route.bodyFormat === 'upload') {
      operation.requestBody = {
        required: true,
        content: {
          'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } },
          'application/zip': { schema: { type: 'string', format: 'binary' } },
        },
      };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: info.schemas ?? v1Schemas,
    },
  };
}

/** The success body of a route in its family's envelope. */
function envelope(route: Route) {
  const data = route.response;
  switch (route.family) {
    case 'v1':
      return { type: 'object', required: ['code', 'msg', 'data'], properties: { code: { const: 0 }, msg: { const: 'success' }, data } };
    case 'open':
      return {
        type: 'object',
        required: ['code', 'message', 'data', 'request_id', ...(route.paginated ? ['pagination'] : [])],
        properties: {
          code: { const: 0 }, message: { const: 'success' }, data, request_id: { type: 'string' },
          ...(route.paginated ? { pagination: { $ref: '#/components/schemas/Pagination' } } : {}),
        },
      };
    default:
      return data;
  }
}

function operationId(route: Route): string {
  const words = route.path.replace(/^\/(api\/(open\/)?(v1\/)?|\.well-known\/)/, '').split('/').filter((s) => s && !s.startsWith('{'));
  return [route.method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('').replace(/[^A-Za-z0-9]/g, '')
    + (route.path.endsWith('}') ? 'ById' : '');
}
