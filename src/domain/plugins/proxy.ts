// network.fetch: a plugin's outbound HTTP through the SSRF guard, with header filtering both ways and a per-plugin rate.
import type { RateLimiter } from '../../auth/rate-limit.js';
import { AppError } from '../../errors.js';
import { isObject } from '../../checks.js';
import { BlockedError, TooLargeError, UpstreamTimeoutError, type GuardedFetch } from '../../net/ssrf-guard.js';
import type { CurrentPlugin } from './catalog.js';
import { invalidParams } from './shared.js';

/** Headers a plugin may neither send nor receive through the proxy. */
const CONTROLLED = /^(cookie|set-cookie|authorization|proxy-.*|host|connection|keep-alive|te|trailer|transfer-encoding|upgrade|content-length)$/i;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

export type BodyEncoding = 'text' | 'base64';

export interface ProxyRequest {
  url: string;
  method?: string | null;
  /** Header names to string values (a map, so it stays JSON in the schema). */
  headers?: unknown;
  body?: string | null;
  bodyEncoding?: BodyEncoding | null;
}

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  bodyEncoding: BodyEncoding;
}

/** A WHATWG-canonical host matches an allow-list entry exactly or as a subdomain. */
export function hostAllowed(host: string, allowList: string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowList.some((entry) => {
    let e = entry.toLowerCase().trim().replace(/\.$/, '');
    try {
      e = new URL(`http://${e.includes(':') && !e.startsWith('[') ? `[${e}]` : e}/`).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return false;
    }
    return h === e || h.endsWith(`.${e}`);
  });
}

/** The URL a proxy request names: a URL at all (INVALID_PARAMS), and http(s) only (SSRF_BLOCKED). */
export function proxyTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParams(`"${raw.slice(0, 100)}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('SSRF_BLOCKED', `Only http and https are allowed, not ${url.protocol}`);
  return url;
}

/** The network permission and the first URL's host were checked before, by the schema's pluginNetwork scope. */
export function createProxy(current: CurrentPlugin, opts: { fetch: GuardedFetch; limiter: RateLimiter; ratePerMinute: number }) {
  return async function proxy(id: string, req: ProxyRequest): Promise<ProxyAnswer> {
    const allowList = (await current(id)).manifest.permissions?.network ?? [];
    const url = proxyTarget(req.url);
    const method = (req.method ?? 'GET').toUpperCase();
    if (!METHODS.includes(method)) throw invalidParams(`method ${method} is not allowed`);
    if (req.headers !== undefined && req.headers !== null && (!isObject(req.headers) || Object.values(req.headers).some((v) => typeof v !== 'string'))) {
      throw invalidParams('headers must be an object of strings');
    }
    const headers = Object.fromEntries(Object.entries((req.headers ?? {}) as Record<string, string>).filter(([k]) => !CONTROLLED.test(k)));
    let body: Buffer | undefined;
    if (req.body !== undefined && req.body !== null) body = req.bodyEncoding === 'base64' ? Buffer.from(req.body, 'base64') : Buffer.from(req.body, 'utf8');
    const rate = await opts.limiter.hit(`proxy:${id}`, opts.ratePerMinute);
    if (!rate.allowed) {
      throw new AppError('RATE_LIMITED', `Plugin ${id} made more than ${opts.ratePerMinute} proxy requests in a minute`, { headers: { 'Retry-After': String(rate.resetSeconds) } });
    }
    try {
      // The allow-list goes with the request so the guard applies it to every redirect hop too, before DNS.
      const answer = await opts.fetch({ url: url.toString(), method, headers, body, allowHost: (host) => hostAllowed(host, allowList) });
      const outHeaders = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !CONTROLLED.test(k)));
      const type = answer.headers['content-type'] ?? '';
      const isText = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i.test(type) || answer.body.length === 0;
      return { status: answer.status, headers: outHeaders, body: answer.body.toString(isText ? 'utf8' : 'base64'), bodyEncoding: isText ? 'text' : 'base64' };
    } catch (e) {
      if (e instanceof BlockedError) throw new AppError('SSRF_BLOCKED', e.message);
      if (e instanceof UpstreamTimeoutError) throw new AppError('UPSTREAM_TIMEOUT', e.message);
      if (e instanceof TooLargeError) throw new AppError('RESPONSE_TOO_LARGE', e.message);
      throw new AppError('ENDPOINT_FAILED', `The request to ${url.hostname} failed: ${(e as Error).message}`);
    }
  };
}
