// Guest-realm facades of the web's encoding functions: TextEncoder, TextDecoder, atob, btoa,
// structuredClone and crypto. Every argument is brand-checked (brand.ts) before anything reaches
// Node: Node sees strings, fresh views made here over the guest's bytes, and options objects made
// here; its errors come back as intrinsic errors with the name and message only. They behave as
// the platform's originals (test/sandbox-api/web-facades-table.test.ts runs a table of cases on both).

import { webcrypto } from 'node:crypto';
import { bytesOf, dictionary, isArrayBuffer, requireArgs, typedArrayName, webString, wrapHostErrors } from './brand.js';
import { makeError } from '../kit/call-scope.js';

const HostTextEncoder = globalThis.TextEncoder;
const HostTextDecoder = globalThis.TextDecoder;
const hostAtob = globalThis.atob;
const hostBtoa = globalThis.btoa;
const hostStructuredClone = globalThis.structuredClone;

const encoder = new HostTextEncoder();

export class TextEncoder {
  /** Marks real instances: a method called on anything else is a TypeError, as on the platform. */
  #brand = true;

  get encoding(): string {
    TextEncoder.#check(this);
    return 'utf-8';
  }

  /** A fresh Uint8Array: its prototype is the intrinsic one, frozen by lockdown. */
  encode(input: unknown = ''): Uint8Array {
    TextEncoder.#check(this);
    return encoder.encode(webString(input));
  }

  encodeInto(source: unknown, destination: unknown): { read: number; written: number } {
    TextEncoder.#check(this);
    requireArgs(arguments.length, 2, 'TextEncoder.encodeInto(source, destination)');
    const text = webString(source);
    if (typedArrayName(destination) !== 'Uint8Array') throw makeError('TypeError', 'TextEncoder.encodeInto: the destination must be a Uint8Array');
    const view = bytesOf(destination) as Uint8Array;
    const r = wrapHostErrors(() => encoder.encodeInto(text, view));
    return { read: r.read, written: r.written };
  }

  static #check(self: unknown): TextEncoder {
    if (typeof self !== 'object' || self === null || !(#brand in self)) throw makeError('TypeError', 'Illegal invocation: not a TextEncoder');
    return self as TextEncoder;
  }
}

export class TextDecoder {
  #decoder: InstanceType<typeof HostTextDecoder>;

  constructor(label: unknown = 'utf-8', options?: unknown) {
    const name = webString(label);
    const o = dictionary(options, 'TextDecoder: options');
    const settings = { fatal: Boolean(o.fatal), ignoreBOM: Boolean(o.ignoreBOM) };
    this.#decoder = wrapHostErrors(() => new HostTextDecoder(name, settings));
  }

  get encoding(): string {
    return TextDecoder.#of(this).encoding;
  }
  get fatal(): boolean {
    return TextDecoder.#of(this).fatal;
  }
  get ignoreBOM(): boolean {
    return TextDecoder.#of(this).ignoreBOM;
  }

  decode(input?: unknown, options?: unknown): string {
    const decoder = TextDecoder.#of(this);
    const bytes = input === undefined ? new Uint8Array(0) : bytesOf(input);
    if (bytes === undefined) throw makeError('TypeError', 'TextDecoder.decode needs an ArrayBuffer, a typed array or a DataView');
    // As Node reads it: `stream` of an object; any other options mean none.
    const stream = (typeof options === 'object' || typeof options === 'function') && options !== null && Boolean((options as { stream?: unknown }).stream);
    return wrapHostErrors(() => decoder.decode(bytes, { stream }));
  }

  static #of(self: unknown): InstanceType<typeof HostTextDecoder> {
    if (typeof self !== 'object' || self === null || !(#decoder in self)) throw makeError('TypeError', 'Illegal invocation: not a TextDecoder');
    return (self as TextDecoder).#decoder;
  }
}

export const atob = (...args: unknown[]): string => {
  requireArgs(args.length, 1, 'atob(data)');
  const data = webString(args[0]);
  return wrapHostErrors(() => hostAtob(data));
};

export const btoa = (...args: unknown[]): string => {
  requireArgs(args.length, 1, 'btoa(data)');
  const data = webString(args[0]);
  return wrapHostErrors(() => hostBtoa(data));
};

// Arrows, as on the platform these are not constructors (and have no prototype object).

/**
 * The platform's structured clone of a guest value. Node reads the value itself (as the platform
 * does: getters and Proxy traps run, Proxies cannot be cloned); the options Node sees are made
 * here, with only real ArrayBuffers to transfer.
 */
export const structuredClone = (...args: unknown[]): unknown => {
  requireArgs(args.length, 1, 'structuredClone(value)');
  const o = dictionary(args[1], 'structuredClone: options');
  const transferList = o.transfer;
  let transfer: ArrayBuffer[] | undefined;
  if (transferList !== undefined) {
    if ((typeof transferList !== 'object' && typeof transferList !== 'function') || transferList === null) {
      throw makeError('TypeError', 'structuredClone: options.transfer must be a list of ArrayBuffers');
    }
    transfer = [];
    for (const item of transferList as Iterable<unknown>) {
      if (!isArrayBuffer(item)) throw makeError('DataCloneError', 'structuredClone: only ArrayBuffers can be transferred here');
      transfer.push(item);
    }
  }
  const value = args[0];
  return wrapHostErrors(() => (transfer ? hostStructuredClone(value, { transfer }) : hostStructuredClone(value)));
};

const INTEGER_ARRAYS = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array']);

/** Largest getRandomValues request, bytes, as on the platform. */
const MAX_RANDOM_BYTES = 65_536;

export const crypto = {
  randomUUID: (): string => webcrypto.randomUUID(),
  getRandomValues<T>(this: unknown, ...args: T[]): T {
    if (this !== crypto) throw makeError('TypeError', 'Illegal invocation: call crypto.getRandomValues(array) as a method of crypto');
    requireArgs(args.length, 1, 'crypto.getRandomValues(array)');
    const array = args[0];
    const kind = typedArrayName(array);
    if (kind === undefined || !INTEGER_ARRAYS.has(kind)) {
      throw makeError('TypeMismatchError', `crypto.getRandomValues needs an integer typed array (Uint8Array, Int32Array, ...), got ${kind ? `a ${kind}` : 'something else'}`);
    }
    const bytes = bytesOf(array) as Uint8Array;
    if (bytes.byteLength > MAX_RANDOM_BYTES) {
      throw makeError('QuotaExceededError', `crypto.getRandomValues: ${bytes.byteLength} bytes requested, over the ${MAX_RANDOM_BYTES}-byte limit`);
    }
    wrapHostErrors(() => webcrypto.getRandomValues(bytes));
    return array as T;
  },
};
