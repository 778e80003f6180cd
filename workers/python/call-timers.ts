// Keeps Python's deferred work inside its own call. Pyodide schedules every event-loop step
// (asyncio tasks, loop.call_later, resolved host promises) through the global setTimeout and
// setImmediate of this thread. Those created while a call runs are recorded and cancelled when it
// ends, and the Python callbacks they held are released at that moment: nothing a call leaves
// behind can run later, inside another agent's call.

type Handle = { kind: 'timeout' | 'immediate'; handle: unknown; callback: unknown };
type Release = (callback: unknown) => void;

const realSetTimeout = globalThis.setTimeout;
const realSetInterval = globalThis.setInterval;
const realSetImmediate = globalThis.setImmediate;
const realClearTimeout = globalThis.clearTimeout;
const realClearInterval = globalThis.clearInterval;
const realClearImmediate = globalThis.clearImmediate;

let recording: Map<unknown, Handle> | undefined;

/** Timer functions for this module's own use, unaffected by the recording. */
export const hostTimers = {
  setTimeout: realSetTimeout,
  setInterval: realSetInterval,
  setImmediate: realSetImmediate,
  clearTimeout: realClearTimeout,
  clearInterval: realClearInterval,
};

/** Replaces the thread's timer globals with recording versions (once, after Pyodide loaded). */
export function installCallTimers(): void {
  const wrap = (kind: Handle['kind'], repeat: boolean, real: (...args: never[]) => unknown) =>
    function (this: unknown, ...args: unknown[]): unknown {
      const map = recording;
      const callback = args[0];
      if (!map || typeof callback !== 'function') return Reflect.apply(real, this, args);
      const entry: Handle = { kind, handle: undefined, callback };
      // A one-shot timer that fired needs no cancelling: forget it, so long calls stay small.
      args[0] = function (this: unknown, ...a: unknown[]): unknown {
        if (!repeat) map.delete(entry.handle);
        return Reflect.apply(callback, this, a);
      };
      entry.handle = Reflect.apply(real, this, args);
      map.set(entry.handle, entry);
      return entry.handle;
    };
  Object.defineProperty(globalThis, 'setTimeout', { value: wrap('timeout', false, realSetTimeout as never), writable: true, configurable: true });
  Object.defineProperty(globalThis, 'setInterval', { value: wrap('timeout', true, realSetInterval as never), writable: true, configurable: true });
  Object.defineProperty(globalThis, 'setImmediate', { value: wrap('immediate', false, realSetImmediate as never), writable: true, configurable: true });
}

/** Starts recording the timers created from now on. */
export function beginCallTimers(): void {
  recording = new Map();
}

/**
 * Cancels every timer created since beginCallTimers and hands each callback to `release`
 * (Pyodide's proxies of Python callables must be destroyed so no Python runs at a later GC).
 */
export function endCallTimers(release: Release): void {
  const map = recording;
  recording = undefined;
  if (!map) return;
  for (const t of map.values()) {
    if (t.kind === 'immediate') realClearImmediate(t.handle as NodeJS.Immediate);
    else {
      realClearTimeout(t.handle as NodeJS.Timeout);
      realClearInterval(t.handle as NodeJS.Timeout);
    }
    release(t.callback);
  }
}
