// Revoked token ids: persisted in the database, checked in memory on every request (no query per request).
import { lt } from 'drizzle-orm';
import { coalesced, type Store, type UnitOfWork } from '../db/store.js';

export interface RevocationList {
  isRevoked(jti: string): boolean;
  /** Records revocations in a transaction of their own; `expiresAt` is the token's exp in seconds, after which the entry can be forgotten. */
  revoke(entries: Array<{ jti: string; expiresAt: number }>): Promise<void>;
  /** `revoke` as a step of the caller's transaction: the in-memory list learns of the entries once it commits. */
  revokeIn(uow: UnitOfWork, entries: Array<{ jti: string; expiresAt: number }>): Promise<void>;
}

/** Rows per insert, well under every engine's limit of bound parameters. */
const CHUNK = 500;

/**
 * The list, kept in memory; processes over one PostgreSQL database announce their revocations to each other, and each
 * reloads the list when it hears of one (contract section 11: refused everywhere within 1 s).
 */
export async function createRevocationList(store: Store): Promise<RevocationList> {
  const { revokedTokens } = store.schema;
  const nowSec = () => Math.floor(Date.now() / 1000);
  await store.transaction(async (tx) => {
    await tx.db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, nowSec()));
  });
  const load = async () => new Map<string, number>(
    (await store.db.select({ jti: revokedTokens.jti, expiresAt: revokedTokens.expiresAt }).from(revokedTokens)).map((r) => [r.jti, r.expiresAt]),
  );
  let revoked = await load();
  store.onAnnouncement('revocations', coalesced('revoked tokens', async () => {
    const fresh = await load();
    // Entries this process added meanwhile are in the table too, unless their transaction has not committed yet.
    for (const [jti, exp] of revoked) if (!fresh.has(jti)) fresh.set(jti, exp);
    revoked = fresh;
  }));

  async function revokeIn(uow: UnitOfWork, entries: Array<{ jti: string; expiresAt: number }>): Promise<void> {
    const at = new Date().toISOString();
    for (let i = 0; i < entries.length; i += CHUNK) {
      const rows = entries.slice(i, i + CHUNK).map((e) => ({ jti: e.jti, expiresAt: e.expiresAt, revokedAt: at }));
      await uow.db.insert(revokedTokens).values(rows).onConflictDoNothing();
    }
    uow.afterCommit(() => {
      for (const e of entries) revoked.set(e.jti, e.expiresAt);
    });
    uow.announce('revocations');
  }

  return {
    isRevoked: (jti) => revoked.has(jti),
    revoke: (entries) => store.transaction((tx) => revokeIn(tx, entries)),
    revokeIn,
  };
}
