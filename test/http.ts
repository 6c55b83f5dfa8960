// The one way tests send a request and read its answer: to an app's fetch handler (no socket) or to a real server.
export interface TestResponse {
  status: number;
  /** The answer parsed as JSON when it is JSON, else its text (null when empty). */
  body: any;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  /** Sent as JSON (with its content type unless `headers` names another). */
  body?: unknown;
  /** Sent as it is: a string, FormData, bytes. */
  raw?: BodyInit;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Sends one request through `handler` (an app's `fetch`, or the global fetch for a real server) and reads the answer. */
export async function send(handler: (request: Request) => Promise<Response>, method: string, url: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const signal = opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined;
  const res = await handler(new Request(url, { method, headers, body, signal }));
  const text = await res.text();
  let parsed: unknown = text || null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}
