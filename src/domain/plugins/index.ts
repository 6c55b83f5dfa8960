// Builds the plugin service from its parts and exposes what the schema, the sandbox server and app.ts call.
import type { RateLimiter } from '../../auth/rate-limit.js';
import type { UrlSigner } from '../../auth/url-signer.js';
import type { GuardedFetch } from '../../net/ssrf-guard.js';
import type { Access } from '../access.js';
import type { Deps } from '../deps.js';
import { createCatalog } from './catalog.js';
import { createConfig } from './config.js';
import { createInstallations } from './installations.js';
import { createPackages } from './packages.js';
import { createProxy } from './proxy.js';
import { createDataCalls } from './rpc.js';
import { createRuns, type RunParts } from './runs.js';
import { createSandboxUrls } from './sandbox-urls.js';
import { createStorage } from './storage.js';

// Every permission (plugin enabled, installed in the base, method declared, caller's role) is decided by the schema's
// plugin scopes before the service runs, so what it exports for them is facts (current, usableInBase) and the rules'
// vocabulary (data methods, the proxy's URL and host checks); the service keeps only its own invariants.
export type { PluginView } from './catalog.js';
export type { ConfigAnswer } from './config.js';
export type { ProxyAnswer } from './proxy.js';
export { hostAllowed, proxyTarget } from './proxy.js';
export { isDataMethod, type DataCallGuard, type DataMethod, type PluginDataGateway } from './rpc.js';
export type { RunAnswer, RunLogEntry, ScriptCaller } from './runs.js';
export type { SandboxUrl } from './sandbox-urls.js';

/**
 * What runs need of a plugin service, by service: services.ts builds the plugin and run services one after the
 * other, and these parts stay out of the plugin service's API.
 */
const runParts = new WeakMap<object, RunParts>();

export function createPluginService(deps: Deps, opts: {
  access: Access;
  hostVersion: string;
  signer: UrlSigner;
  fetch: GuardedFetch;
  limiter: RateLimiter;
  proxyRatePerMinute: number;
}) {
  const { store } = deps;
  const catalog = createCatalog(deps);
  const packages = createPackages(deps, catalog, opts.hostVersion);
  const config = createConfig(deps, catalog, opts.access);
  // What the scopes, the sandbox, the proxy and runs read of a plugin is read outside transactions: through the store.
  const current = (id: string) => catalog.current(store, id);
  const effectiveConfig = (id: string, baseId: string) => config.effective(store, id, baseId);
  const installations = createInstallations(deps, catalog);
  const storageCall = createStorage(deps);
  // RPC reads the sandbox's open contexts and the sandbox checks tables the RPC way: each reaches the other lazily.
  const calls = createDataCalls(deps, {
    effectiveConfig,
    storageCall,
    openContext: (token, id, baseId) => sandbox.openContext(token, id, baseId),
  });
  const sandbox = createSandboxUrls(current, { signer: opts.signer, publicUrl: deps.config.publicUrl, tableInBase: calls.tableInBase });
  const proxy = createProxy(current, { fetch: opts.fetch, limiter: opts.limiter, ratePerMinute: opts.proxyRatePerMinute });

  const service = {
    // Facts the plugin scopes decide on.
    current,
    usableInBase: installations.usableInBase,

    // Packages, versions and status (system administrators).
    listPlugins: async (baseId?: string | null) => catalog.list(baseId),
    getPlugin: async (id: string, baseId?: string | null) => catalog.view(store, id, baseId),
    uploadPlugin: packages.upload,
    setStatus: packages.setStatus,
    rollback: packages.rollback,
    uninstallPlugin: packages.uninstall,
    /** Counts a failed run or call in a transaction of its own (runs count theirs as they record their end; tests put a plugin in error with it). */
    recordOutcome: packages.recordOutcome,

    // Configuration and base installations.
    getConfig: config.get,
    putConfig: config.put,
    installPlugin: installations.install,
    setInstallation: installations.setEnabled,
    removeInstallation: installations.remove,

    // What a plugin does for its caller, once the scopes have passed.
    rpc: calls.rpc,
    proxy,
    sandboxUrl: sandbox.sandboxUrl,

    // The sandbox server (plugins-runtime/serve.ts): URL signatures, manifests and files of any retained version.
    signer: opts.signer,
    manifestOf: (id: string, version: string) => catalog.manifestOf(store, id, version),
    filesOf: catalog.filesOf,
    file: catalog.file,
  };
  runParts.set(service, { catalog, calls, effectiveConfig, countOutcome: packages.countOutcome });
  return service;
}

export type PluginService = ReturnType<typeof createPluginService>;

/** Script runs and endpoint calls of the plugins of `plugins`. */
export function createPluginRunService(deps: Deps, plugins: PluginService) {
  const parts = runParts.get(plugins);
  if (!parts) throw new Error('createPluginRunService needs a service made by createPluginService');
  return createRuns(deps, parts);
}
