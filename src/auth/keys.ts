// The service's signing key pair (Ed25519), generated on first start and kept by the store (a file in DATA_DIR on SQLite,
// a row on PostgreSQL) so tokens survive restarts and every process signs with the same key.
import { exportJWK, generateKeyPair, importJWK, calculateJwkThumbprint, type JWK, type CryptoKey } from 'jose';
import type { Store } from '../db/store.js';

export interface SigningKeys {
  kid: string;
  alg: 'EdDSA';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export async function loadOrCreateKeys(store: Pick<Store, 'secret'>): Promise<SigningKeys> {
  const privateJwk: JWK = JSON.parse(await store.secret('signing-key', async () => {
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const jwk = await exportJWK(pair.privateKey);
    jwk.kid = await calculateJwkThumbprint(jwk);
    return JSON.stringify(jwk);
  }));
  const { d: _secret, ...publicJwk } = privateJwk;
  const kid = privateJwk.kid!;
  return {
    kid,
    alg: 'EdDSA',
    privateKey: (await importJWK(privateJwk, 'EdDSA')) as CryptoKey,
    publicKey: (await importJWK(publicJwk, 'EdDSA')) as CryptoKey,
    publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' },
  };
}
