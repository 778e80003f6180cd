// Imported before SES, by every thread that loads it next to WebAssembly glue (workers/js/sandbox-worker.ts).
// Node 20's ArrayBuffer has no `detached` getter (V8 11.3). SES adds one when it is missing, but
// that one answers false for a buffer that WebAssembly memory growth detached (measured: the old
// buffer of a grown Memory reads byteLength 0 and detached false). wasm-bindgen glue, such as
// amaro's (the TypeScript stripper), trusts `detached` once it is defined: it kept a DataView over
// the dead buffer and failed every call whose input grew the stripper's memory ("Cannot perform
// DataView.prototype.getInt32 on a detached ArrayBuffer"), so TypeScript of about 30 KB failed in
// every sandbox thread. This defines the getter as the standard says, from what Node 20 can
// observe: a view of a detached buffer cannot be constructed. SES keeps it (the property is one
// it permits) and hardens it with the other intrinsics.

const byteLengthOf = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')?.get as (this: ArrayBuffer) => number;

if (Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached') === undefined) {
  Object.defineProperty(ArrayBuffer.prototype, 'detached', {
    get(this: ArrayBuffer): boolean {
      // Throws a TypeError for anything but an ArrayBuffer, as the standard getter does.
      if (Reflect.apply(byteLengthOf, this, []) > 0) return false;
      try {
        new DataView(this);
        return false;
      } catch {
        return true;
      }
    },
    enumerable: false,
    configurable: true,
  });
}

export {};
