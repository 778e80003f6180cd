// Encryption of what daemons keep in the shared store (PII values, vault secrets): AES-256-GCM
// with a key every daemon of the cluster is given (config `redisKey`), a fresh 96-bit IV per value
// and the value's place (vault and token) as associated data, so a sealed value copied under
// another vault's key does not open. Whoever reads Redis without the key sees only ciphertext.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { StoreError } from './store-error.js';

/** Bytes of an AES-256 key. */
export const SEALING_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The key from its configured text: 64 hex digits or base64 of 32 bytes; null when malformed. */
export function parseSealingKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const key = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
    return key.length === SEALING_KEY_BYTES ? key : null;
  }
  return null;
}

export class Sealer {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== SEALING_KEY_BYTES) throw new RangeError(`the sealing key must be ${SEALING_KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  /** base64 of IV, tag and ciphertext; `place` binds the value to where it is stored. */
  seal(plain: Uint8Array | string, place: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(place, 'utf8'));
    const body = Buffer.concat([cipher.update(typeof plain === 'string' ? Buffer.from(plain, 'utf8') : plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** The plain bytes; a value sealed with another key or for another place is refused. */
  open(sealed: string, place: string): Buffer {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new StoreError('STORE_CORRUPT', 'a sealed value in the shared store is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(place, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch (error) {
      throw new StoreError('STORE_CORRUPT', 'a value in the shared store does not open with this daemon\'s redisKey (another key, or tampered with); every daemon of a cluster needs the same redisKey', { cause: error });
    }
  }
}
