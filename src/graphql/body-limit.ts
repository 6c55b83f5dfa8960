// The size limit of /graphql request bodies, in front of yoga. yoga's own (maxRequestBodySize) pipes every POST body
// through a TransformStream, about 60 µs of CPU a request; here a declared Content-Length is checked (Node's HTTP parser
// reads no further than it), and only a body without one (chunked) is read with the limit, into a request yoga reads as is.
import { Request as FetchRequest, Response as FetchResponse } from '@whatwg-node/fetch';
import { readBytes } from '../../rest-adapters/adapter.js';
import { AppError } from '../errors.js';

/** yoga's default, which /graphql had before this module took the check over. */
export const GRAPHQL_MAX_BODY_BYTES = 25_000_000;

const tooLarge = () => new FetchResponse(JSON.stringify({
  errors: [{ message: `Request body too large: at most ${GRAPHQL_MAX_BODY_BYTES} bytes`, extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } }],
}), { status: 413, headers: { 'content-type': 'application/json; charset=utf-8' } });

/** `request` again with `body`, once its own body has been read. */
export const withBody = (request: Request, body: BodyInit | null | undefined): Request =>
  new FetchRequest(request.url, { method: request.method, headers: request.headers, body, signal: request.signal });

/**
 * The request to hand yoga when its body is within the limit (read into a new request when it declared no length), or
 * the 413 to answer when it is not.
 */
export async function limitGraphqlBody(request: Request): Promise<{ request: Request } | { tooLarge: Response }> {
  if (request.method === 'GET' || request.method === 'HEAD') return { request };
  const declared = request.headers.get('content-length');
  if (declared !== null) return Number(declared) > GRAPHQL_MAX_BODY_BYTES ? { tooLarge: tooLarge() } : { request };
  try {
    const body = await readBytes(request, GRAPHQL_MAX_BODY_BYTES);
    return { request: withBody(request, body) };
  } catch (e) {
    if (e instanceof AppError && e.code === 'PAYLOAD_TOO_LARGE') return { tooLarge: tooLarge() };
    throw e;
  }
}
