// What every domain service is built from, and who is acting.
import type Database from 'better-sqlite3';
import type { Config } from '../config.js';
import type { Orm } from '../db/connection.js';
import type { RecordStore } from '../db/record-store.js';
import type { RevocationList } from '../auth/revocations.js';
import type { TokenService } from '../auth/tokens.js';

export interface Deps {
  sqlite: Database.Database;
  orm: Orm;
  store: RecordStore;
  tokens: TokenService;
  revocations: RevocationList;
  config: Config;
}

/** The caller of an operation: a signed-in user (an application actor arrives with the Open API). */
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
export type Actor = UserActor;
