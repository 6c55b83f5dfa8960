// Outbound HTTP for workflows (and the plugin proxy): only public addresses, checked on the address actually
// connected to after DNS and again on every redirect, an optional per-request host allow-list checked on every hop
// before DNS, a timeout and a size cap.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';

export class BlockedError extends Error {
  readonly code = 'SSRF_BLOCKED';
}
export class UpstreamTimeoutError extends Error {
  readonly code = 'UPSTREAM_TIMEOUT';
}
export class TooLargeError extends Error {
  readonly code = 'RESPONSE_TOO_LARGE';
}

export interface GuardOptions {
  /** `host:port` pairs exempt from the private-address rule (tests only). */
  allowPrivate?: string[];
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** The DNS lookup behind every connection (tests inject or spy on it); defaults to `dns.lookup`. */
  lookup?: LookupAll;
}

/** `dns.lookup` with `all: true`: every address of a name. */
export type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface FetchRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * The caller's allow-list (a plugin's network permission, a webhook's target), asked about the host of the first URL
   * and of every redirect hop before any DNS lookup or connection; a refused host is a BlockedError. The host is the
   * URL's WHATWG-canonical hostname (lower case, numeric IPv4 forms as dotted quads) without IPv6 brackets.
   */
  allowHost?: (host: string) => boolean;
  /** `manual` answers a redirect as it is instead of following it (webhook deliveries: a 3xx is not a 2xx). */
  redirect?: 'follow' | 'manual';
}

export interface FetchAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  url: string;
}

/** True for addresses a server-side request must never reach: anything but public unicast. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.process(address); // IPv4-mapped IPv6 becomes IPv4
  return parsed.range() !== 'unicast';
}

/** Parses a URL in WHATWG form (decimal and octal IPv4 hosts become dotted quads) and checks its scheme. */
export function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedError(`"${raw.slice(0, 100)}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BlockedError(`Only http and https URLs are allowed, not ${url.protocol}`);
  if (url.username || url.password) throw new BlockedError('URLs with credentials are not allowed');
  return url;
}

const defaultPort = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');
const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');
const allowList = (pairs: string[] = []) => new Set(pairs.map((s) => s.trim().toLowerCase()).filter(Boolean));
const isExempt = (allow: Set<string>, url: URL) => allow.has(`${bareHost(url).toLowerCase()}:${defaultPort(url)}`);

/**
 * What can be told of a target before any request (a webhook URL when it is saved): the checks of `checkUrl`, and that an
 * IP-literal host is public unless `allowPrivate` exempts it. A name is only resolved when a request is made, and checked then.
 */
export function checkTarget(raw: string, allowPrivate: string[] = []): URL {
  const url = checkUrl(raw);
  const host = bareHost(url);
  if (ipaddr.isValid(host) && isPrivateAddress(host) && !isExempt(allowList(allowPrivate), url)) throw new BlockedError(`${host} is a private address`);
  return url;
}

export function createGuardedFetch(opts: GuardOptions = {}) {
  const allow = allowList(opts.allowPrivate);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
  const maxRedirects = opts.maxRedirects ?? 5;
  // Looked up at call time rather than captured, so a spy on dns.lookup sees every lookup.
  const lookup: LookupAll = opts.lookup ?? ((hostname, options, callback) => dns.lookup(hostname, options, callback));

  const exempt = (url: URL) => isExempt(allow, url);

  /** A DNS lookup that refuses private answers: the socket connects to exactly the address checked here. */
  function guardedLookup(url: URL): net_LookupFunction {
    return (hostname, options, callback) => {
      lookup(hostname, { ...options, all: true }, (err, list) => {
        if (err) return callback(err, '', 4);
        const bad = exempt(url) ? undefined : list.find((a) => isPrivateAddress(a.address));
        if (bad || !list.length) return callback(new BlockedError(`${hostname} resolves to a private address (${bad?.address ?? 'none'})`), '', 4);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
        callback(null, list[0].address, list[0].family);
      });
    };
  }

  function once(url: URL, req: FetchRequest, deadline: number): Promise<FetchAnswer> {
    const host = bareHost(url);
    if (ipaddr.isValid(host) && isPrivateAddress(host) && !exempt(url)) {
      return Promise.reject(new BlockedError(`${host} is a private address`));
    }
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const left = deadline - Date.now();
      if (left <= 0) return reject(new UpstreamTimeoutError(`No answer within ${timeoutMs} ms`));
      const r = mod.request(url, { method: req.method ?? 'GET', headers: req.headers, lookup: guardedLookup(url), timeout: left }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            res.destroy();
            reject(new TooLargeError(`The answer is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks), url: url.toString() });
        });
        res.on('error', reject);
      });
      const timer = setTimeout(() => r.destroy(new UpstreamTimeoutError(`No answer within ${timeoutMs} ms`)), left);
      r.on('close', () => clearTimeout(timer));
      r.on('timeout', () => r.destroy(new UpstreamTimeoutError(`No answer within ${timeoutMs} ms`)));
      r.on('error', reject);
      if (req.body !== undefined) r.write(req.body);
      r.end();
    });
  }

  /** Fetches with the guard on every hop; redirects are followed by hand (at most `maxRedirects`). */
  return async function guardedFetch(req: FetchRequest): Promise<FetchAnswer> {
    const deadline = Date.now() + timeoutMs;
    let url = checkUrl(req.url);
    let current = req;
    for (let hop = 0; ; hop++) {
      // Every hop, the first included: a redirect must not lead outside the caller's allow-list, and the name must
      // not even be resolved (a lookup alone leaks to the name's DNS server that, and when, we were sent there).
      if (req.allowHost && !req.allowHost(bareHost(url))) {
        throw new BlockedError(hop === 0 ? `${url.hostname} is not in the allow-list` : `The redirect to ${url.hostname} leaves the allow-list`);
      }
      const answer = await once(url, current, deadline);
      const location = answer.headers.location;
      if (![301, 302, 303, 307, 308].includes(answer.status) || !location || req.redirect === 'manual') return answer;
      if (hop >= maxRedirects) throw new BlockedError(`More than ${maxRedirects} redirects`);
      const next = checkUrl(new URL(location, url).toString());
      // 303, and 301/302 after POST, continue as GET without a body, as browsers do.
      const keepsMethod = answer.status === 307 || answer.status === 308;
      current = keepsMethod ? current : { ...current, method: 'GET', body: undefined };
      // Credentials meant for one origin never follow a redirect to another (as fetch and browsers do).
      if (next.origin !== url.origin && current.headers) current = { ...current, headers: withoutCredentials(current.headers) };
      url = next;
    }
  };
}

/** Headers without those that carry credentials: Authorization, Cookie and Proxy-Authorization. */
function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !/^(authorization|cookie|proxy-authorization)$/i.test(k)));
}

type net_LookupFunction = NonNullable<http.RequestOptions['lookup']>;
export type GuardedFetch = ReturnType<typeof createGuardedFetch>;
