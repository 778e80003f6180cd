// Idle-time preparation of the next call's realm. A fresh SES Compartment costs 120-210 µs to
// make (RUNTIME-FINDINGS.md), most of a trivial call's work in the thread; a thread that is idle
// between calls makes the next one then, off the call's critical path. A prepared Compartment is
// pristine by construction: it is made with no globals, no guest code has been evaluated in it, and it
// is taken by exactly one call (the slot is emptied when taken), so no agent can plant anything in
// it for another. The call's own globals are defined on it when it is taken.

/** The Compartment made while idle, not yet taken by any call. */
let prepared: Compartment | undefined;
let scheduled = false;

/** Makes the next call's Compartment after the current turn (the answer is written first). */
export function prepareSoon(): void {
  if (prepared || scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    if (prepared) return;
    const realm = new Compartment({ __options__: true });
    // SES makes a Compartment's evaluator on its first evaluate: made now, with a constant, it is
    // off the call's path too (about 60 µs). No guest code has run and nothing is defined.
    realm.evaluate('void 0');
    prepared = realm;
  });
}

/** The call's Compartment with `globals` defined on it: the prepared one (emptied), or a new one. */
export function takeRealm(globals: Record<string, unknown>): Compartment {
  const realm = prepared;
  prepared = undefined;
  if (!realm) return new Compartment({ __options__: true, globals });
  const global = realm.globalThis as Record<string, unknown>;
  for (const key of Object.keys(globals)) {
    Object.defineProperty(global, key, { value: globals[key], writable: true, enumerable: true, configurable: true });
  }
  return realm;
}

/** Counters for tests and the bench: how many calls took a prepared realm. */
export function hasPreparedRealm(): boolean {
  return prepared !== undefined;
}
