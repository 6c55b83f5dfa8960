// The GraphQL context: who is calling, the services, and the request id (the same for REST and /graphql).
import type { Actor } from '../src/domain/deps.js';
import type { Services } from '../src/domain/services.js';
import type { RequestState } from '../src/log.js';

export interface Context {
  actor: Actor | null;
  services: Services;
  requestId: string;
  /** The caller's network address (see TRUST_PROXY), for per-address limits such as login throttling. */
  clientAddress: string;
  /** The request's record for its access line and extra answer headers; absent for in-process operations (workflows). */
  requestState?: RequestState;
  /** SSE's `Last-Event-ID` of a reconnecting subscriber: where its event subscriptions resume. */
  lastEventId?: string | null;
  /** Aborted when the caller hangs up: ends its event streams even while they wait for the next event. */
  signal?: AbortSignal;
}
