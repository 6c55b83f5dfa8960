// The service's signing key pair (Ed25519), generated on first start and kept in DATA_DIR so tokens survive restarts.
import { exportJWK, generateKeyPair, importJWK, calculateJwkThumbprint, type JWK, type CryptoKey } from 'jose';
import fs from 'node:fs';
import path from 'node:path';

export interface SigningKeys {
  kid: string;
  alg: 'EdDSA';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export async function loadOrCreateKeys(dataDir: string): Promise<SigningKeys> {
  const file = path.join(dataDir, 'signing-key.json');
  let privateJwk: JWK;
  if (fs.existsSync(file)) {
    privateJwk = JSON.parse(fs.readFileSync(file, 'utf8'));
  } else {
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    privateJwk = await exportJWK(pair.privateKey);
    privateJwk.kid = await calculateJwkThumbprint(privateJwk);
    fs.writeFileSync(file, JSON.stringify(privateJwk), { mode: 0o600 });
  }
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
