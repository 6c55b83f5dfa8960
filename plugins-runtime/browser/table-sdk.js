// Plugin-side half of the table-sdk postMessage bridge: defines window.TableSDK inside the sandboxed loader iframe (plain ES2019, no build step).
(function (global) {
  'use strict';

  var CHANNEL = 'table-sdk';
  var API_VERSION = '1';
  // A host that never answers must not leave the plugin's promises pending forever.
  var REQUEST_TIMEOUT_MS = 30000;

  function sdkError(code, message) {
    var err = new Error(message || code);
    err.code = code;
    return err;
  }

  // The frame has an opaque origin, but location still reflects the signed loader URL the host built.
  function readHandshakeToken() {
    try {
      var value = new URLSearchParams(global.location.search).get('ht');
      return value ? value : null;
    } catch (e) {
      return null;
    }
  }

  var token = readHandshakeToken();
  var parentWindow = global.parent;
  var nextId = 1;
  var pending = {}; // id -> {resolve, reject, timer}
  var queued = []; // requests made before the handshake, sent once permissions are known
  var readyCallbacks = [];
  var handshakeDone = false;
  var context = null;
  var permissions = null;
  var readyResolve;
  var readyPromise = new Promise(function (resolve) {
    readyResolve = resolve;
  });
  var assetMap = null;

  function post(message) {
    message.channel = CHANNEL;
    message.token = token;
    // An opaque-origin frame cannot name the parent's origin; the host authenticates by source window and token instead.
    parentWindow.postMessage(message, '*');
  }

  function hasNetworkPermission() {
    // Deny by default: only a non-empty allow-list of domains makes network.fetch visible (spec 3, 4.2 rule 2).
    return !!permissions && Array.isArray(permissions.network) && permissions.network.length > 0;
  }

  function settle(id, fn, value) {
    var entry = pending[id];
    if (!entry) return;
    delete pending[id];
    clearTimeout(entry.timer);
    if (fn === 'resolve') entry.resolve(value);
    else entry.reject(value);
  }

  function send(entry) {
    // A queued request may already have timed out; the caller has its answer, so it must not reach the host.
    if (!pending[entry.id]) return;
    if (entry.method === 'network.fetch' && !hasNetworkPermission()) {
      // Refused locally so an undeclared capability never even reaches the host.
      settle(entry.id, 'reject', sdkError('PERMISSION_DENIED', 'network.fetch needs the network permission'));
      return;
    }
    try {
      post({ type: 'request', id: entry.id, method: entry.method, params: entry.params });
    } catch (e) {
      // postMessage throws DataCloneError for params holding functions, DOM nodes and the like.
      settle(entry.id, 'reject', sdkError('INVALID_PARAMS', 'params cannot be sent: ' + (e && e.message)));
    }
  }

  function request(method, params) {
    if (typeof method !== 'string' || method === '') {
      return Promise.reject(sdkError('INVALID_PARAMS', 'method must be a non-empty string'));
    }
    if (!token) {
      // Without the token the host drops every message, so fail now instead of after the timeout.
      return Promise.reject(sdkError('NOT_CONNECTED', 'no handshake token in the loader URL'));
    }
    var id = nextId++;
    var entry = { id: id, method: method, params: params == null ? {} : params };
    var promise = new Promise(function (resolve, reject) {
      pending[id] = {
        resolve: resolve,
        reject: reject,
        // Counted from the call, so a handshake that never comes also ends in TIMEOUT.
        timer: setTimeout(function () {
          settle(id, 'reject', sdkError('TIMEOUT', method + ' got no answer in ' + REQUEST_TIMEOUT_MS / 1000 + ' s'));
        }, REQUEST_TIMEOUT_MS),
      };
    });
    // Before the handshake the permissions are unknown, so the request waits for them.
    if (handshakeDone) send(entry);
    else queued.push(entry);
    return promise;
  }

  function runReadyCallback(cb) {
    try {
      cb(sdk);
    } catch (e) {
      // One failing callback must not keep the others from running; the error still reaches the console.
      setTimeout(function () {
        throw e;
      }, 0);
    }
  }

  function ready(cb) {
    if (cb != null && typeof cb !== 'function') throw new TypeError('TableSDK.ready expects a function');
    if (cb) {
      if (handshakeDone) runReadyCallback(cb);
      else readyCallbacks.push(cb);
    }
    return readyPromise;
  }

  function loadAssetMap() {
    // Read lazily: the assets JSON tag comes after this script in the loader page.
    var doc = global.document;
    var el = doc && doc.getElementById ? doc.getElementById('table-sdk-assets') : null;
    if (!el) return null;
    try {
      var parsed = JSON.parse(el.textContent || '{}');
      return parsed && typeof parsed === 'object' ? parsed : {};
    } catch (e) {
      return {};
    }
  }

  function assetUrl(path) {
    if (typeof path !== 'string' || path === '') throw sdkError('ASSET_NOT_FOUND', 'assetUrl expects a package path');
    if (!assetMap) assetMap = loadAssetMap();
    // Manifest paths are package-relative; tolerate the './' and '/' spellings plugin authors write.
    var key = path.replace(/^(\.\/|\/)+/, '');
    if (assetMap && Object.prototype.hasOwnProperty.call(assetMap, key) && typeof assetMap[key] === 'string') {
      return assetMap[key];
    }
    throw sdkError('ASSET_NOT_FOUND', 'no packaged file at ' + path);
  }

  function call(method) {
    return function (params) {
      return request(method, params);
    };
  }

  var sdk = {
    apiVersion: API_VERSION,
    ready: ready,
    request: request,
    assetUrl: assetUrl,
    // Convenience namespaces mirroring the method table of spec 3, 4.2.
    ui: { getContext: call('ui.getContext'), notify: call('ui.notify') },
    selection: { get: call('selection.get') },
    config: { get: call('config.get') },
    storage: { get: call('storage.get'), set: call('storage.set'), remove: call('storage.remove') },
    table: {
      getSchema: call('table.getSchema'),
      listTables: call('table.listTables'),
      getRecords: call('table.getRecords'),
      getRecord: call('table.getRecord'),
    },
    record: { create: call('record.create'), update: call('record.update'), delete: call('record.delete') },
    backend: { call: call('backend.call') },
  };
  // Snapshots of what the handshake carried, for plugins that want them without a round trip.
  Object.defineProperty(sdk, 'context', { enumerable: true, get: function () { return context; } });
  Object.defineProperty(sdk, 'permissions', { enumerable: true, get: function () { return permissions; } });

  function onHandshake(data) {
    // The handshake fixes context and permissions for this open; later ones cannot widen them.
    if (handshakeDone) return;
    handshakeDone = true;
    context = data.context && typeof data.context === 'object' ? data.context : {};
    permissions = data.permissions && typeof data.permissions === 'object' ? data.permissions : {};
    if (hasNetworkPermission()) sdk.network = { fetch: call('network.fetch') };
    var waiting = queued;
    queued = [];
    waiting.forEach(send);
    var callbacks = readyCallbacks;
    readyCallbacks = [];
    callbacks.forEach(runReadyCallback);
    readyResolve(sdk);
  }

  function onResponse(data) {
    var id = data.id;
    if (typeof id !== 'number' || !pending[id]) return;
    if (data.error != null) {
      var e = data.error;
      var code = e && typeof e.code === 'string' ? e.code : 'INTERNAL';
      settle(id, 'reject', sdkError(code, e && typeof e.message === 'string' ? e.message : code));
    } else {
      settle(id, 'resolve', data.result);
    }
  }

  function onMessage(event) {
    // Only the parent (the host page) may speak on this channel, and only with this open's token.
    if (!token || event.source !== parentWindow) return;
    var data = event.data;
    if (!data || typeof data !== 'object' || data.channel !== CHANNEL || data.token !== token) return;
    if (data.type === 'handshake') onHandshake(data);
    else if (data.type === 'response') onResponse(data);
  }

  global.TableSDK = sdk;
  global.addEventListener('message', onMessage);
  if (token) {
    post({ type: 'hello' });
  } else if (global.console && global.console.error) {
    global.console.error('TableSDK: the loader URL has no handshake token (ht); the host bridge is unavailable');
  }
})(typeof window !== 'undefined' ? window : this);
