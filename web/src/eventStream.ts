// Live events of a table or base: a GraphQL subscription over SSE (graphql-yoga's protocol) read with fetch, since EventSource cannot send the Bearer token; reconnects with backoff and resumes after the last seq it saw.
import { session } from './api';

/** An event of the log (contract section 14) as the `Event` type answers it. */
export interface LiveEvent {
  id: string;
  seq: string;
  type: string;
  tableId: string | null;
  recordId: string | null;
  actor: { type: string; id: string | null };
  at: string;
  data: any;
}

/** connecting: first attempt; live: the stream is open; retrying: waiting to reconnect; stopped: closed or refused. */
export type LiveStatus = 'connecting' | 'live' | 'retrying' | 'stopped';

export const EVENT_SELECTION = 'id seq type tableId recordId actor at data';
export const TABLE_EVENTS = `subscription TableEvents($t: ID!, $after: String) { tableEvents(tableId: $t, after: $after) { ${EVENT_SELECTION} } }`;

export interface EventStreamOptions {
  /** A subscription document taking `$after: String`. */
  query: string;
  variables: Record<string, unknown>;
  /** The subscription's root field (`tableEvents`). */
  field: string;
  onEvent(e: LiveEvent): void;
  /**
   * A connection opened; `resumed` says it continues after a seq already seen. Without a cursor the server starts at
   * "now", so whatever happened before may be missed: the caller (re)loads what it shows.
   */
  onOpen?(resumed: boolean): void;
  onStatus?(status: LiveStatus, reason?: string): void;
}

/** Waits before reconnecting: 1 s, 2 s, 4 s … at most 30 s, with jitter so many tabs do not return at once. */
const backoff = (attempt: number) => Math.min(30_000, 1000 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
/** yoga pings every 12 s; a connection silent for longer than this is dead (a sleeping laptop, a dropped proxy). */
const SILENCE_MS = 35_000;
/** A tab hidden this long lets its connection go (browsers allow few per origin over HTTP/1.1) and resumes when shown. */
const HIDDEN_PAUSE_MS = 60_000;
/** Errors after which retrying cannot help. */
const FINAL_CODES = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST', 'GRAPHQL_VALIDATION_FAILED']);

class Refused extends Error {}

/** Opens the subscription and keeps it open until `close()`. */
export function openEventStream(opts: EventStreamOptions): { close(): void } {
  let lastSeq: string | null = null;
  let closed = false;
  let attempt = 0;
  let controller: AbortController | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let silenceTimer: ReturnType<typeof setTimeout> | undefined;
  let hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  let paused = false;
  /** The current connection attempt; an older one that ends late must not schedule another. */
  let generation = 0;
  const status = (s: LiveStatus, reason?: string) => opts.onStatus?.(s, reason);

  const newer = (seq: string) => lastSeq === null || BigInt(seq) > BigInt(lastSeq);

  function handleMessage(event: string, data: string) {
    if (event === 'complete') throw new Error('the server ended the stream');
    if (event !== 'next' || !data) return;
    const body = JSON.parse(data);
    if (body.errors?.length) {
      const code = body.errors[0].extensions?.code ?? '';
      const msg = body.errors[0].message ?? 'refused';
      if (FINAL_CODES.has(code) || body.errors[0].extensions?.http?.status === 403) throw new Refused(msg);
      throw new Error(msg);
    }
    const e = body.data?.[opts.field] as LiveEvent | undefined;
    // A resumed stream starts after `lastSeq`; the check keeps an event from being applied twice whatever happens.
    if (!e || !newer(e.seq)) return;
    lastSeq = e.seq;
    opts.onEvent(e);
  }

  async function connect() {
    if (closed || paused) return;
    const gen = ++generation;
    if (!session.token) {
      status('stopped', 'signed out');
      return;
    }
    controller = new AbortController();
    const abort = controller;
    let openedAt = 0;
    const armSilence = () => {
      clearTimeout(silenceTimer);
      silenceTimer = setTimeout(() => abort.abort(), SILENCE_MS);
    };
    try {
      const res = await fetch('/graphql', {
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${session.token}` },
        body: JSON.stringify({ query: opts.query, variables: { ...opts.variables, after: lastSeq } }),
      });
      if (res.status === 401 || res.status === 403) throw new Refused(`the server answered ${res.status}`);
      if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) throw new Error(`the server answered ${res.status}`);
      armSilence();
      openedAt = Date.now();
      status('live');
      opts.onOpen?.(lastSeq !== null);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error('the stream ended');
        armSilence();
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue; // a ping
            const colon = line.indexOf(':');
            const name = colon < 0 ? line : line.slice(0, colon);
            const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (name === 'event') event = val;
            else if (name === 'data') data.push(val);
          }
          handleMessage(event, data.join('\n'));
        }
      }
    } catch (e) {
      abort.abort();
      if (closed || paused || gen !== generation) return;
      clearTimeout(silenceTimer);
      if (e instanceof Refused) {
        status('stopped', e.message);
        return;
      }
      status('retrying', (e as Error).message);
      // A connection that stayed up a while was healthy: start the backoff again from the shortest wait.
      if (openedAt && Date.now() - openedAt > 10_000) attempt = 0;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        void connect();
      }, backoff(attempt++));
    }
  }

  // Back online: no need to sit out the rest of a long backoff.
  const onOnline = () => {
    if (closed || !retryTimer) return;
    clearTimeout(retryTimer);
    retryTimer = undefined;
    void connect();
  };
  window.addEventListener('online', onOnline);

  // Hidden for a while: hang up, keeping the cursor; shown again: resume after the last event seen.
  const onVisibility = () => {
    clearTimeout(hiddenTimer);
    if (document.visibilityState === 'hidden') {
      hiddenTimer = setTimeout(() => {
        paused = true;
        clearTimeout(retryTimer);
        retryTimer = undefined;
        clearTimeout(silenceTimer);
        controller?.abort();
      }, HIDDEN_PAUSE_MS);
    } else if (paused) {
      paused = false;
      status('connecting');
      void connect();
    }
  };
  document.addEventListener('visibilitychange', onVisibility);

  status('connecting');
  void connect();
  return {
    close() {
      closed = true;
      clearTimeout(retryTimer);
      clearTimeout(silenceTimer);
      clearTimeout(hiddenTimer);
      controller?.abort();
      window.removeEventListener('online', onOnline);
      document.removeEventListener('visibilitychange', onVisibility);
      status('stopped');
    },
  };
}
