// The guest's host functions that only forward to the coordinator, made in one loop from the one
// table (api-contract.ts): a 'host-sync' entry whose host method is its own name and that is not
// written by hand in globals.ts takes string arguments, named and marked optional by its
// JavaScript signature in the table. Every function reaches the call it serves through the realm's
// cell (CallCell), filled when a call takes the realm and emptied when the call ends, so the
// functions are made once per realm, while the thread is idle (prepared-realm.ts), and one kept
// past its call's end refuses with a clear error instead of acting for anyone.

import type { WorkerTask } from '../kit/protocol.js';
import { SANDBOX_API } from '../kit/api-contract.js';
import type { ApiEntry } from '../kit/api-contract.js';
import type { CallScope } from '../kit/call-scope.js';
import { makeError } from '../kit/call-scope.js';
import { toJsonSafe } from '../kit/serialize.js';

export interface Evaluator {
  evaluate(source: string): unknown;
}

/** What one call gives the realm it takes: everything per call that the guest's functions use. */
export interface CallState {
  scope: CallScope;
  task: WorkerTask;
  evaluator: () => Evaluator;
}

/** A realm's one per-call slot: the call running in it, or undefined before and after. */
export interface CallCell {
  call: CallState | undefined;
}

/** The call the realm serves now, or the error a function kept past its call's end gets. */
export function callOf(cell: CallCell, what: string): CallState {
  const call = cell.call;
  if (!call) throw makeError('Error', `${what} was called after its execute_code call ended`);
  return call;
}

/** Functions with behaviour of their own, written in globals.ts; everything else is generated. */
export const HAND_WRITTEN: ReadonlySet<string> = new Set(['read_file', 'save_skill', 'import_skill', 'search_tools']);

/**
 * A string argument, or a TypeError naming the function and parameter. Converting other values
 * (Symbols, BigInts, functions, Proxies) to their descriptions would write files named after them.
 */
export function str(value: unknown, fn: string, param: string): string {
  if (typeof value !== 'string') {
    throw makeError('TypeError', `${fn}: ${param} must be a string, got ${value === null ? 'null' : typeof value}${param === 'content' ? ' (use JSON.stringify for data)' : ''}`);
  }
  return value;
}

export function optionalStr(value: unknown, fn: string, param: string): string | undefined {
  return value === undefined || value === null ? undefined : str(value, fn, param);
}

/** Host arguments travel as plain data, cut off (and refused) past the per-call argument limit. */
export function plain(task: WorkerTask, v: unknown): unknown {
  if (typeof v === 'string') return v;
  const budget = { chars: task.maxArgChars, cut: false };
  const data = toJsonSafe(v, budget);
  if (budget.cut) throw makeError('RangeError', `an argument is over ${task.maxArgChars} characters as JSON, the limit for one call to the host`);
  return data;
}

/** A blocking host call of the cell's call, its arguments made plain data. */
export function callSync(cell: CallCell, method: string, args: readonly unknown[]): unknown {
  const { scope, task } = callOf(cell, method);
  return scope.callSync(method, args.map((a) => plain(task, a)));
}

/** An awaited host call of the cell's call; every failure is a rejection. */
export function callAsync(cell: CallCell, method: string, args: readonly unknown[]): Promise<unknown> {
  try {
    const { scope, task } = callOf(cell, method);
    return scope.callAsync(method, args.map((a) => plain(task, a)));
  } catch (err) {
    return Promise.reject(err);
  }
}

interface Param {
  name: string;
  optional: boolean;
  /** What an omitted optional argument becomes (the Python signature's default, as the host expects). */
  fallback: string | undefined;
}

/** The parameters of a table signature such as `list_files(subpath?: string): FileInfo[]`. */
export function paramsOf(entry: ApiEntry): Param[] {
  const inner = /^\w+\(([^)]*)\)/.exec(entry.js)?.[1] ?? '';
  const defaults = new Map<string, string>();
  for (const m of (entry.python ?? '').matchAll(/(\w+)='([^']*)'/g)) defaults.set(m[1] as string, m[2] as string);
  return inner
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => {
      const name = (/^\w+/.exec(p) ?? [''])[0];
      return { name, optional: p.includes('?'), fallback: defaults.get(name) };
    });
}

/** The table's plain forwarding entries: what `forwardingFunctions` makes. */
export const FORWARDED: readonly ApiEntry[] = Object.freeze(SANDBOX_API.filter((x) => x.kind === 'host-sync' && x.hostMethod === x.name && !HAND_WRITTEN.has(x.name)));

/** Each forwarded function's name and parameters, read from the table once per thread. */
const FORWARDED_PARAMS: readonly (readonly [string, readonly Param[]])[] = FORWARDED.map((x) => [x.name, paramsOf(x)] as const);

/** The plain forwarding functions of one realm, bound to its cell. Arrows: no prototype to plant on. */
export function forwardingFunctions(cell: CallCell): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [method, params] of FORWARDED_PARAMS) {
    out[method] = (...args: unknown[]) =>
      callSync(
        cell,
        method,
        params.map((p, i) => (p.optional ? (optionalStr(args[i], method, p.name) ?? p.fallback ?? null) : str(args[i], method, p.name))),
      );
  }
  return out;
}
