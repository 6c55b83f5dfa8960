// What every domain service is built from, and who is acting.
import type { Config } from '../config.js';
import type { Store } from '../db/store.js';
import type { RevocationList } from '../auth/revocations.js';
import type { TokenService } from '../auth/tokens.js';
import type { SigningKeys } from '../auth/keys.js';
import type { RateLimiter } from '../auth/rate-limit.js';
import type { UrlSigner } from '../auth/url-signer.js';
import type { GuardedFetch } from '../net/ssrf-guard.js';

export interface Deps {
  /** The database: reads outside transactions through `store.db` / `store.records`, writes in `store.transaction`. */
  store: Store;
  keys: SigningKeys;
  tokens: TokenService;
  revocations: RevocationList;
  config: Config;
  /** Outbound HTTP through the SSRF guard (workflow http_request, plugin proxy). */
  fetch: GuardedFetch;
  /** Signs the plugin sandbox loader and file URLs. */
  signer: UrlSigner;
  limiter: RateLimiter;
}

/** The caller of an operation: a signed-in user, a third-party application or a workflow running its steps. */
export interface UserActor {
  kind: 'user';
  id: string;
  isAdmin: boolean;
  email: string;
  name: string;
  /** The token's id and expiry, so logout can revoke it. */
  jti: string;
  exp: number;
}
/** An application calling the Open API with a client-credentials token. */
export interface AppActor {
  kind: 'app';
  /** The application id (a UUID): the operator of its writes. */
  id: string;
  isAdmin: false;
  clientId: string;
  /** Scopes granted by the token (the application's current scopes are checked too). */
  tokenScopes: string[];
  jti: string;
  exp: number;
}
/**
 * A workflow running its steps (update_record, create_record, run_script): an editor of the base of its table and
 * nothing more, so a step can never reach further than a person who may edit that base.
 */
export interface WorkflowActor {
  kind: 'workflow';
  /** The workflow id: recorded as creator or last editor of the records its steps write. */
  id: string;
  /** The base of the workflow's table, the only base it may read or write. */
  baseId: string;
  isAdmin: false;
}
/**
 * An import job writing its rows (contract section 15): its events carry actor type `import` with the job id; the
 * records show the user who started it as creator. It only ever writes the one table its job names.
 */
export interface ImportActor {
  kind: 'import';
  /** The job id. */
  id: string;
  /** The user who started the import. */
  userId: string;
  baseId: string;
  isAdmin: false;
}
/**
 * A public form submitted through a view's share link (contract section 13): its events carry actor type `share` with
 * the view id; it only ever creates records in the view's table.
 */
export interface ShareActor {
  kind: 'share';
  /** The form view's id. */
  id: string;
  baseId: string;
  isAdmin: false;
}
export type Actor = UserActor | AppActor | WorkflowActor | ImportActor | ShareActor;
