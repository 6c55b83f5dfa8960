// The GraphQL context: who is calling, the services, and the request id (the same for REST and /graphql).
import type { Actor } from '../src/domain/deps.js';
import type { Services } from '../src/domain/services.js';

export interface Context {
  actor: Actor | null;
  services: Services;
  requestId: string;
}
