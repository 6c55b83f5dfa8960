// Each plugin's key-value storage per base (storage.get/set/remove): JSON values up to 64 KiB, at most 1000 keys.
import { and, count, eq } from 'drizzle-orm';
import { first } from '../../db/store.js';
import { AppError, conflict } from '../../errors.js';
import type { Deps } from '../deps.js';
import { invalidParams } from './shared.js';

const VALUE_LIMIT = 64 * 1024;
const KEY_LIMIT = 1000;

export type StorageMethod = 'storage.get' | 'storage.set' | 'storage.remove';

export function createStorage(deps: Deps) {
  const { store } = deps;
  const { pluginStorage } = store.schema;

  return async function storageCall(id: string, baseId: string, method: StorageMethod, params: Record<string, unknown>): Promise<unknown> {
    const key = params.key;
    if (typeof key !== 'string' || !key || key.length > 256) throw invalidParams('key must be a string of 1 to 256 characters');
    const where = and(eq(pluginStorage.pluginId, id), eq(pluginStorage.baseId, baseId), eq(pluginStorage.key, key));
    if (method === 'storage.get') {
      const r = await first(store.db.select().from(pluginStorage).where(where).limit(1));
      return r ? JSON.parse(r.value) : null;
    }
    if (method === 'storage.remove') {
      const removed = await store.transaction(async (tx) => tx.db.delete(pluginStorage).where(where).returning({ key: pluginStorage.key }));
      return { removed: removed.length > 0 };
    }
    if (params.value === undefined) throw invalidParams('value is required (any JSON)');
    const text = JSON.stringify(params.value);
    if (Buffer.byteLength(text) > VALUE_LIMIT) throw new AppError('PAYLOAD_TOO_LARGE', `A stored value may be at most ${VALUE_LIMIT} bytes`);
    return store.transaction(async (tx) => {
      const exists = await first(tx.db.select({ key: pluginStorage.key }).from(pluginStorage).where(where).limit(1));
      if (!exists) {
        const n = (await first(tx.db.select({ n: count() }).from(pluginStorage).where(and(eq(pluginStorage.pluginId, id), eq(pluginStorage.baseId, baseId)))))!.n;
        if (n >= KEY_LIMIT) throw conflict(`A plugin may keep at most ${KEY_LIMIT} keys per base`);
      }
      await tx.db.insert(pluginStorage).values({ pluginId: id, baseId, key, value: text })
        .onConflictDoUpdate({ target: [pluginStorage.pluginId, pluginStorage.baseId, pluginStorage.key], set: { value: text } });
      return { key, stored: true };
    });
  };
}
