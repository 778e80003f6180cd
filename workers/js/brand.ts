// Brand checks for what guests hand the web facades. A prototype or `instanceof` check is not one:
// `Object.create(Uint8Array.prototype)`, a Proxy of a real Uint8Array and a subclass instance all
// pass it, and Node, given such a value, throws its own errors (whose prototypes are shared and
// mutable) or formats the value with util.inspect (which calls a guest's inspect hook with Node's
// inspect). These checks use the intrinsic getters, which read internal slots and never run guest
// code; what reaches Node is a fresh view made here over the guest's bytes, never the guest's object.

import { makeError } from '../kit/call-scope.js';

const apply = Reflect.apply;
const Uint8 = Uint8Array;

function getter(proto: object, key: PropertyKey): (this: unknown) => unknown {
  const get = Object.getOwnPropertyDescriptor(proto, key)?.get;
  if (!get) throw new Error(`no intrinsic getter ${String(key)}`);
  return get;
}

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
const typedArrayTag = getter(TypedArrayPrototype, Symbol.toStringTag);
const typedArrayBuffer = getter(TypedArrayPrototype, 'buffer');
const typedArrayOffset = getter(TypedArrayPrototype, 'byteOffset');
const typedArrayLength = getter(TypedArrayPrototype, 'byteLength');
const dataViewBuffer = getter(DataView.prototype, 'buffer');
const dataViewOffset = getter(DataView.prototype, 'byteOffset');
const dataViewLength = getter(DataView.prototype, 'byteLength');
const arrayBufferLength = getter(ArrayBuffer.prototype, 'byteLength');
const sharedBufferLength = typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'byteLength') : undefined;

/** The typed array kind ('Uint8Array', ...) of a real typed array (subclasses too); undefined for anything else. */
export function typedArrayName(value: unknown): string | undefined {
  return apply(typedArrayTag, value, []) as string | undefined;
}

function throwsOn(get: (this: unknown) => unknown, value: unknown): boolean {
  try {
    apply(get, value, []);
    return false;
  } catch {
    return true;
  }
}

export function isArrayBuffer(value: unknown): value is ArrayBuffer {
  return typeof value === 'object' && value !== null && !throwsOn(arrayBufferLength, value);
}

function isSharedArrayBuffer(value: unknown): boolean {
  return sharedBufferLength !== undefined && typeof value === 'object' && value !== null && !throwsOn(sharedBufferLength, value);
}

/** `buffer` does not throw on a detached buffer (byteLength does), so it is the DataView brand check. */
function isDataView(value: unknown): value is DataView {
  return typeof value === 'object' && value !== null && !throwsOn(dataViewBuffer, value);
}

/**
 * A fresh Uint8Array over the bytes of a real typed array, DataView, ArrayBuffer or
 * SharedArrayBuffer (what the web calls a BufferSource); undefined for anything else, look-alikes
 * included. Only this view, never the guest's object, is handed to Node.
 */
export function bytesOf(value: unknown): Uint8Array | undefined {
  if (typedArrayName(value) !== undefined) {
    return new Uint8(apply(typedArrayBuffer, value, []) as ArrayBuffer, apply(typedArrayOffset, value, []) as number, apply(typedArrayLength, value, []) as number);
  }
  if (isDataView(value)) {
    return new Uint8(apply(dataViewBuffer, value, []) as ArrayBuffer, apply(dataViewOffset, value, []) as number, apply(dataViewLength, value, []) as number);
  }
  if (isArrayBuffer(value) || isSharedArrayBuffer(value)) return new Uint8(value as ArrayBuffer);
  return undefined;
}

/** A string as the web converts one (a guest's toString runs; a Symbol is a TypeError, as on the platform). */
export function webString(value: unknown): string {
  return typeof value === 'string' ? value : `${value as string}`;
}

/**
 * A web IDL dictionary argument: undefined and null are empty, an object (arrays and functions
 * too) is read by the caller, anything else is a TypeError naming the parameter.
 */
export function dictionary(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' || typeof value === 'function') return value as Record<string, unknown>;
  throw makeError('TypeError', `${what} must be an object, got ${typeof value}`);
}

/** A TypeError like the platform's when a required argument is missing. */
export function requireArgs(count: number, needed: number, what: string): void {
  if (count < needed) throw makeError('TypeError', `${what} needs ${needed} argument${needed === 1 ? '' : 's'}, got ${count}`);
}

const HostDOMException = globalThis.DOMException;

/** Runs host code; a host error (Node's internal classes, DOMException) becomes an intrinsic one. */
export function wrapHostErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw guestError(err);
  }
}

/**
 * What a guest may see of a thrown value. A primitive, or an object whose prototype is frozen
 * (an intrinsic error, or what guest code threw from a getter Node ran), passes unchanged, as on
 * the platform; anything else (Node's internal error classes, DOMException) becomes an intrinsic
 * error with the name and message only, never its prototype or code.
 */
export function guestError(err: unknown): unknown {
  try {
    if (err === null || (typeof err !== 'object' && typeof err !== 'function')) return err;
    if (!(err instanceof HostDOMException) && Object.isFrozen(Object.getPrototypeOf(err))) return err;
  } catch {
    // a Proxy whose traps throw: described below
  }
  let name = 'Error';
  let message = 'host operation failed';
  try {
    const e = err as { name?: unknown; message?: unknown };
    if (typeof e?.name === 'string') name = e.name;
    if (typeof e?.message === 'string') message = e.message;
  } catch {
    // a getter that throws: keep the defaults
  }
  return makeError(name, message);
}
