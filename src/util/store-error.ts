// The one error a shared store (Redis) raises when it cannot answer: a stable code, and a message
// that says what is unavailable and that it comes back by itself, so tools and sandbox methods can
// report an outage as a clear failure rather than an internal error.

import { DaemonError } from './daemon-error.js';

export type StoreErrorCode = 'STORE_UNAVAILABLE' | 'STORE_FULL' | 'STORE_CORRUPT';

export class StoreError extends DaemonError {
  declare readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.name = 'StoreError';
  }
}

export function isStoreError(error: unknown): error is StoreError {
  return error instanceof StoreError;
}
