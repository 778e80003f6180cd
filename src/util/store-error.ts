// The one error a shared store (Redis) raises when it cannot answer: a stable code, and a message
// that says what is unavailable and that it comes back by itself, so tools and sandbox methods can
// report an outage as a clear failure rather than an internal error.

export type StoreErrorCode = 'STORE_UNAVAILABLE' | 'STORE_FULL' | 'STORE_CORRUPT';

export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

export function isStoreError(error: unknown): error is StoreError {
  return error instanceof StoreError;
}
