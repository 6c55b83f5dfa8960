// Revoked token ids: persisted in SQLite, checked in memory on every request (no query per request).
import type Database from 'better-sqlite3';

export interface RevocationList {
  isRevoked(jti: string): boolean;
  /** Records revocations; `expiresAt` is the token's exp in seconds, after which the entry can be forgotten. */
  revoke(entries: Array<{ jti: string; expiresAt: number }>): void;
}

/** The in-process list; a multi-process deployment would put the same interface in front of a shared store. */
export function createRevocationList(sqlite: Database.Database): RevocationList {
  const nowSec = () => Math.floor(Date.now() / 1000);
  sqlite.prepare('DELETE FROM revoked_tokens WHERE expires_at < ?').run(nowSec());
  const revoked = new Map<string, number>(
    (sqlite.prepare('SELECT jti, expires_at FROM revoked_tokens').raw().all() as [string, number][]),
  );
  const insert = sqlite.prepare('INSERT OR IGNORE INTO revoked_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?)');
  return {
    isRevoked: (jti) => revoked.has(jti),
    revoke(entries) {
      const at = new Date().toISOString();
      sqlite.transaction(() => {
        for (const e of entries) insert.run(e.jti, e.expiresAt, at);
      }).immediate();
      for (const e of entries) revoked.set(e.jti, e.expiresAt);
    },
  };
}
