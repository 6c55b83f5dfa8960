// The host half of the table-sdk postMessage bridge: authenticates each message (source window, channel, handshake token) and answers or relays it.
import { ApiError, rest } from '../api';
import { RECORDS_CHANGED_EVENT, type RecordsChangedDetail, type SandboxOpen } from './types';

const CHANNEL = 'table-sdk';
const RECORD_WRITES = new Set(['record.create', 'record.update', 'record.delete']);
const NOTIFY_TYPES = new Set(['info', 'success', 'warning', 'error']);
/** Requests of one open waiting for an answer at once; more are refused with RATE_LIMITED. */
const MAX_IN_FLIGHT = 32;

export interface Notice {
  message: string;
  type: 'info' | 'success' | 'warning' | 'error';
}

export interface BridgeOptions {
  /** The plugin's iframe; created but not yet in the document (the listener must exist before it can load). */
  frame: HTMLIFrameElement;
  pluginId: string;
  baseId: string;
  tableId: string | null;
  open: SandboxOpen;
  notify(notice: Notice): void;
}

export interface Bridge {
  /** Removes the window listener; later messages are ignored and in-flight answers are dropped. */
  dispose(): void;
}

interface BridgeError {
  code: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function toBridgeError(e: unknown): BridgeError {
  if (e instanceof ApiError) return { code: e.code, message: e.message };
  if (isObject(e) && typeof e.code === 'string') return { code: e.code, message: String(e.message ?? e.code) };
  return { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) };
}

const fail = (code: string, message: string): never => {
  throw { code, message } satisfies BridgeError;
};

/**
 * Starts listening for one open plugin frame. Call it BEFORE the frame is inserted, so the plugin's first `hello`
 * cannot be missed. A message is accepted only when all hold:
 *  - `event.source` is this frame's window (not another frame, not the page itself, not a popup);
 *  - `data.channel` is 'table-sdk' and `data.token` equals this open's handshake token.
 * The origin cannot be checked: a sandbox without allow-same-origin has the opaque origin 'null'.
 * Answers go to `frame.contentWindow` only, carrying the same token.
 */
export function createBridge(opts: BridgeOptions): Bridge {
  const { frame, open } = opts;
  const token = open.handshake_token;
  const permissions = isObject(open.permissions) ? open.permissions : {};
  const context = isObject(open.context) ? open.context : {};
  let disposed = false;

  const post = (message: Record<string, unknown>) => {
    const target = frame.contentWindow;
    if (disposed || !target) return;
    // '*' because the sandboxed frame's origin is opaque and cannot be named; the target is this frame's window only.
    target.postMessage({ ...message, channel: CHANNEL, token }, '*');
  };

  async function answer(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      // ui.* and selection.get are answered here from the open's snapshot (contract 7 allows it); the rest go to the server.
      case 'ui.getContext':
        return context;
      case 'selection.get':
        return context.selection ?? null;
      case 'ui.notify': {
        if (typeof params.message !== 'string' || !params.message.trim()) fail('INVALID_PARAMS', 'ui.notify needs a message');
        const type = NOTIFY_TYPES.has(String(params.type)) ? (params.type as Notice['type']) : 'info';
        opts.notify({ message: String(params.message).slice(0, 500), type });
        return null;
      }
      case 'network.fetch': {
        // Deny by default, also here: without a declared allow-list the method does not exist for the plugin.
        if (!Array.isArray(permissions.network) || permissions.network.length === 0) fail('PERMISSION_DENIED', 'network.fetch needs the network permission');
        const data = await rest<Record<string, unknown>>('POST', `/api/plugins/${encodeURIComponent(opts.pluginId)}/proxy`, {
          base_id: opts.baseId, url: params.url, method: params.method, headers: params.headers, body: params.body, body_encoding: params.body_encoding,
        } as Record<string, unknown>);
        return data;
      }
      case 'backend.call': {
        if (typeof params.name !== 'string' || !/^[a-z][a-z0-9-]*$/.test(params.name)) fail('INVALID_PARAMS', 'backend.call needs the name of a declared endpoint');
        // The answer is `{result}`, the value the Python side set (spec 3, 4.2).
        return rest('POST', `/api/plugins/${encodeURIComponent(opts.pluginId)}/call/${encodeURIComponent(String(params.name))}`, {
          base_id: opts.baseId, payload: params.payload ?? null,
        } as Record<string, unknown>);
      }
      default: {
        // Everything else is checked by the server: plugin enabled and installed, permission declared, the user's role.
        // table_id is left out, not null, when the plugin was opened outside a table.
        const data = await rest<{ result: unknown }>('POST', `/api/plugins/${encodeURIComponent(opts.pluginId)}/rpc`, {
          base_id: opts.baseId, ...(opts.tableId ? { table_id: opts.tableId } : {}), method, params, handshake_token: token,
        });
        if (RECORD_WRITES.has(method)) recordsChanged(method, params, data.result);
        return data.result;
      }
    }
  }

  function recordsChanged(method: string, params: Record<string, unknown>, result: unknown) {
    const fromResult = isObject(result) && typeof result.id === 'string' ? result.id : null;
    const detail: RecordsChangedDetail = {
      tableId: typeof params.tableId === 'string' ? params.tableId : opts.tableId,
      baseId: opts.baseId,
      pluginId: opts.pluginId,
      method: method as RecordsChangedDetail['method'],
      recordId: typeof params.recordId === 'string' ? params.recordId : fromResult,
    };
    window.dispatchEvent(new CustomEvent<RecordsChangedDetail>(RECORDS_CHANGED_EVENT, { detail }));
  }

  let inFlight = 0;
  async function onRequest(data: Record<string, unknown>) {
    const id = data.id;
    if (typeof id !== 'number' || !Number.isFinite(id)) return;
    // A plugin looping on requests must not flood the server from the user's browser.
    if (inFlight >= MAX_IN_FLIGHT) {
      post({ type: 'response', id, error: { code: 'RATE_LIMITED', message: `More than ${MAX_IN_FLIGHT} requests are waiting for an answer` } });
      return;
    }
    inFlight++;
    try {
      if (typeof data.method !== 'string' || !data.method || data.method.length > 100) fail('INVALID_PARAMS', 'method must be a non-empty string');
      const params = data.params === undefined || data.params === null ? {} : data.params;
      if (!isObject(params)) fail('INVALID_PARAMS', 'params must be an object');
      const result = await answer(String(data.method), params as Record<string, unknown>);
      post({ type: 'response', id, result: result === undefined ? null : result });
    } catch (e) {
      post({ type: 'response', id, error: toBridgeError(e) });
    } finally {
      inFlight--;
    }
  }

  function onMessage(event: MessageEvent) {
    if (disposed) return;
    // Only this frame's window: contentWindow is null until the frame is in the document, so nothing passes before.
    if (!frame.contentWindow || event.source !== frame.contentWindow) return;
    const data = event.data;
    if (!isObject(data) || data.channel !== CHANNEL || typeof data.token !== 'string' || data.token !== token) return;
    if (data.type === 'hello') post({ type: 'handshake', context, permissions });
    else if (data.type === 'request') void onRequest(data);
  }

  window.addEventListener('message', onMessage);
  return {
    dispose() {
      disposed = true;
      window.removeEventListener('message', onMessage);
    },
  };
}
