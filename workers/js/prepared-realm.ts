// Idle-time preparation of the next call's realm. A fresh SES Compartment costs 120-210 µs to
// make (RUNTIME-FINDINGS.md) and its globals about as much again, most of a trivial call's work in
// the thread; a thread that is idle between calls makes both then, off the call's critical path. A
// prepared realm is pristine by construction: no guest code has been evaluated in it, its functions
// reach a call only through its cell (guest-api.ts), which is empty until a call takes the realm,
// and it is taken by exactly one call (the slot is emptied when taken), so no agent can plant
// anything in it for another. A call that takes it fills the cell and defines its own values
// (workspace, result, context_vars); when the call ends the cell is emptied for good.

import type { CallCell, CallState } from './guest-api.js';
import { callValues, realmGlobals } from './globals.js';

/** A Compartment with its globals, and the cell through which they reach the call it serves. */
export interface Realm {
  readonly compartment: Compartment;
  readonly cell: CallCell;
}

/** The realm made while idle, not yet taken by any call. */
let prepared: Realm | undefined;
let scheduled = false;

function makeRealm(): Realm {
  const cell: CallCell = { call: undefined };
  return { compartment: new Compartment({ __options__: true, globals: realmGlobals(cell) }), cell };
}

/** Makes the next call's realm after the current turn (the answer is written first). */
export function prepareSoon(): void {
  if (prepared || scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    if (prepared) return;
    const realm = makeRealm();
    // SES makes a Compartment's evaluator on its first evaluate: made now, with a constant, it is
    // off the call's path too (about 60 µs). No guest code has run.
    realm.compartment.evaluate('void 0');
    prepared = realm;
  });
}

/** A pristine realm serving `call`: the prepared one (the slot emptied), or one made now. */
export function takeRealm(call: CallState): Realm {
  const realm = prepared ?? makeRealm();
  prepared = undefined;
  realm.cell.call = call;
  const global = realm.compartment.globalThis as Record<string, unknown>;
  const values = callValues(call.task);
  for (const key of Object.keys(values)) {
    Object.defineProperty(global, key, { value: values[key], writable: true, enumerable: true, configurable: true });
  }
  return realm;
}

/** Ends the realm's call: every function of the realm refuses to act from now on. */
export function endRealm(realm: Realm): void {
  realm.cell.call = undefined;
}
