// The shape of a REST route-table entry: an HTTP method and path mapped onto one GraphQL operation.

export type JsonSchema = Record<string, unknown>;
/** Envelope families: v1 (/api/v1, /api/auth), open (/api/open/v1, /api/oauth), token (RFC 6749), raw (JSON as is). */
export type Family = 'v1' | 'open' | 'token' | 'raw';
/** Where a streamed upload goes: import files, or attachment files (each with its own directory and size limit). */
export type SpoolName = 'imports' | 'attachments';

export interface QueryParam {
  type: 'integer' | 'string';
  description: string;
  required?: boolean;
}

export interface RouteRequest {
  /** Path parameters, by the names in `{braces}`. */
  params: Record<string, string>;
  /** Query parameters after type conversion (integers are numbers). */
  query: Record<string, string | number | undefined>;
  /** The parsed body ({} when there is none); for `spool`, the spooled file `{upload, fileName, options}`. */
  body: any;
  headers: Headers;
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI-style path, e.g. `/api/v1/tables/{table_id}`. */
  path: string;
  family: Family;
  summary: string;
  tag: string;
  /** False for routes that take no bearer token (login, discovery). */
  auth?: boolean;
  query?: Record<string, QueryParam>;
  /** JSON Schema of the request body, checked before the operation runs. */
  body?: JsonSchema;
  /**
   * `form` also reads application/x-www-form-urlencoded bodies (the token endpoint); `upload` reads a package from a
   * multipart `file` part or a raw body into `body.file` (a Buffer), up to 50 MiB.
   */
  bodyFormat?: 'json' | 'form' | 'upload' | 'spool';
  /** For `spool`: which of the adapter's spools takes the file (imports unless given). */
  spoolInto?: SpoolName;
  /**
   * Who must be calling before the body is read at all, so nobody else can make the server read a large body (the
   * plugin upload: a system administrator; an import: a role in the base of the path's table or base; an attachment: a user).
   */
  requireBeforeBody?: 'systemAdmin' | 'user' | { role: 'editor' | 'admin'; param: 'table_id' | 'base_id' };
  /**
   * The operation answers a file's plan rather than data: the adapter's `download` hook streams the file (export).
   * The one kind of route whose answer is not the operation's data in an envelope; errors still are.
   */
  download?: boolean;
  /** Open API list: `result` returns `{data, pagination}`. */
  paginated?: boolean;
  /** The GraphQL operation this route runs in process. */
  document: string;
  variables: (req: RouteRequest) => Record<string, unknown>;
  /** Maps the operation's `data` onto the envelope's `data`. */
  result: (data: any) => unknown;
  /** JSON Schema of the envelope's `data`. */
  response: JsonSchema;
  /** Success status, 200 unless given. */
  status?: number;
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
