// The guest's whole world: the endowments of one call's Compartment. Every power is a function
// that finds its call through the realm's cell (guest-api.ts), checks it is still running and goes
// to the host through the call's port; every object handed over is hardened or made for this realm
// alone, so nothing here is shared between calls.

import { TOOL_NAMES_METHOD } from '../kit/protocol.js';
import type { WorkerTask } from '../kit/protocol.js';
import type { CallScope } from '../kit/call-scope.js';
import { makeError } from '../kit/call-scope.js';
import { aggregateStats, filterByField, formatOutput, summarizeList } from './data-helpers.js';
import { countRead, fastRead } from '../kit/fast-read.js';
import { callAsync, callOf, callSync, forwardingFunctions, optionalStr, str } from './guest-api.js';
import type { CallCell, CallState, Evaluator } from './guest-api.js';
import { atob, btoa, crypto, structuredClone } from './web-encoding.js';
import { TextDecoder, TextEncoder, URL, URLSearchParams } from './web-facades.js';

export { SANDBOX_API_NAMES } from './api-names.js';
export type { CallCell, CallState, Evaluator } from './guest-api.js';

declare global {
  var harden: <T>(value: T) => T;
}



interface ModuleSource {
  name: string;
  language: string;
  source: string;
}

/** Host classes and functions the guest may use, hardened once per worker after lockdown. */
let shared: Record<string, unknown> | undefined;

/**
 * What every call on this worker shares: hardened once, so no call can change it for another.
 * Nothing here is a Node host class: the web classes are guest-realm facades (web-facades.ts) and
 * host functions are wrapped so their errors become intrinsic errors with the message only.
 */
export function sharedEndowments(): Record<string, unknown> {
  if (shared) return shared;
  const GuestMath = Object.create(Object.prototype, Object.getOwnPropertyDescriptors(Math)) as Math;
  const endowments: Record<string, unknown> = {
    // lockdown leaves the start compartment's Date and Math.random working; compartments get
    // versions that throw. The guest gets the working ones: time and randomness are expected.
    Date,
    Math: GuestMath,
    // A nested Compartment gets SES's default globals, among them Node's own TextEncoder and
    // TextDecoder, whose errors have mutable prototypes shared by every call (found by the
    // reachability audit). The sandbox API has no use for nested compartments.
    Compartment: undefined,
    // Arrows have no prototype object a guest could plant on.
    filter_by_field: (data: unknown, field: unknown, value: unknown) => filterByField(data, field, value),
    summarize_list: (data: unknown, limit?: unknown) => summarizeList(data, limit),
    aggregate_stats: (data: unknown, numericFields?: unknown) => aggregateStats(data, numericFields),
    format_output: (data: unknown, maxChars?: unknown) => formatOutput(data, maxChars),
    URL,
    URLSearchParams,
    TextEncoder,
    TextDecoder,
    // Brand-checked facades (web-encoding.ts): nothing a guest passes reaches Node as it is.
    atob,
    btoa,
    structuredClone,
    crypto,
  };
  for (const name of ['Float32Array', 'Float64Array'] as const) {
    if (typeof globalThis[name] === 'function') endowments[name] = globalThis[name];
  }
  shared = harden(endowments);
  return shared;
}

/**
 * One realm's globals: made once per realm, while the thread is idle (prepared-realm.ts), before
 * any call. Each function reaches the call it serves through `cell` (guest-api.ts), so nothing
 * here is rebuilt per call and a function kept past its call's end refuses to act. The per-call
 * values (workspace, result, context_vars) are `callValues`.
 */
export function realmGlobals(cell: CallCell): Record<string, unknown> {
  const sync = (method: string, ...args: unknown[]): unknown => callSync(cell, method, args);
  const console = consoleOf(cell);
  return {
    ...sharedEndowments(),
    ...forwardingFunctions(cell),
    console,
    print: console.log,
    ...timerGlobals(cell),
    ...hostGlobals(cell, sync),
    import_skill: skillImporter(cell, sync),
    tools: toolsObject(
      () => sync(TOOL_NAMES_METHOD),
      (server, tool, args) => callAsync(cell, 'call_tool', [server, tool, args ?? {}]),
    ),
  };
  // The functions and containers here are made afresh for each realm and the host never reads
  // them back, so they need no hardening (which would cost more than the rest of the call);
  // what is shared between calls (sharedEndowments) is hardened once.
}

type Sync = (method: string, ...args: unknown[]) => unknown;

/** console.* and print: the call's output lines; output after the call's end is dropped (CallScope.log). */
function consoleOf(cell: CallCell): Record<'log' | 'info' | 'debug' | 'warn' | 'error' | 'trace' | 'dir' | 'table', (...args: unknown[]) => void> {
  const log = (...args: unknown[]): void => cell.call?.scope.log(args);
  const one = (v: unknown): void => cell.call?.scope.log([v]);
  return { log, info: log, debug: log, warn: log, error: log, trace: log, dir: one, table: one };
}

/** setTimeout, setInterval, their clears, queueMicrotask and sleep: bound to the call's scope, gone with it. */
function timerGlobals(cell: CallCell): Record<string, unknown> {
  const scopeOf = (what: string): CallScope => callOf(cell, what).scope;
  return {
    setTimeout: (fn: unknown, ms?: unknown, ...args: unknown[]) => scopeOf('setTimeout').setTimer(fn, ms, args, false),
    setInterval: (fn: unknown, ms?: unknown, ...args: unknown[]) => scopeOf('setInterval').setTimer(fn, ms, args, true),
    clearTimeout: (id: unknown) => cell.call?.scope.clearTimer(id),
    clearInterval: (id: unknown) => cell.call?.scope.clearTimer(id),
    queueMicrotask: (fn: unknown) => {
      const scope = scopeOf('queueMicrotask');
      scope.assertActive('queueMicrotask');
      if (typeof fn !== 'function') throw makeError('TypeError', 'queueMicrotask needs a function');
      void Promise.resolve().then(() => {
        if (!scope.active) return;
        try {
          (fn as () => void)();
        } catch (err) {
          scope.fail(err instanceof Error ? err : makeError('Error', `Uncaught exception in microtask: ${String(err)}`));
        }
      });
    },
    sleep: (ms: unknown) => {
      try {
        return scopeOf('sleep').sleep(ms);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}

/** The host functions with behaviour of their own (the plain ones are forwardingFunctions). */
function hostGlobals(cell: CallCell, sync: Sync): Record<string, unknown> {
  return {
    read_file: (path: unknown) => {
      const file = str(path, 'read_file', 'path');
      const { scope, task } = callOf(cell, 'read_file');
      scope.assertActive('read_file');
      const content = fastRead(task.readGrant, file);
      if (content === undefined) return sync('read_file', file);
      countRead(task.interrupt, content.length);
      return content;
    },
    save_skill: (name: unknown, code: unknown, description?: unknown, language?: unknown, options?: unknown) =>
      sync(
        'save_skill',
        str(name, 'save_skill', 'name'),
        str(code, 'save_skill', 'code'),
        optionalStr(description, 'save_skill', 'description') ?? '',
        optionalStr(language, 'save_skill', 'language') ?? null,
        // {shared: true} publishes the skill (needs the publish permission); read once, as data.
        options === undefined || options === null ? null : { shared: (options as { shared?: unknown }).shared === true },
      ),
    search_tools: (query: unknown, options?: unknown) => sync('search_tools', optionalStr(query, 'search_tools', 'query') ?? '', options ?? {}),
    // Always there: without a net permission the host refuses with a message naming it, which
    // tells an agent more than a missing global would.
    fetch: async (input: unknown, init?: unknown) => {
      const res = (await callAsync(cell, 'fetch', [String(input), init ?? {}])) as FetchReply;
      return makeResponse(res);
    },
  };
}

/**
 * import_skill: this realm's skill modules (a realm serves one call, so they are that call's),
 * evaluated by the call's evaluator, each once, with import cycles refused.
 */
function skillImporter(cell: CallCell, sync: Sync): (name: unknown) => Promise<unknown> {
  const modules = new Map<string, Promise<unknown>>();
  const loading: string[] = [];
  return (name: unknown): Promise<unknown> => {
    let call: CallState;
    try {
      call = callOf(cell, 'import_skill');
    } catch (err) {
      return Promise.reject(err);
    }
    if (typeof name !== 'string') return Promise.reject(makeError('TypeError', 'import_skill(name): name must be a string'));
    const inProgress = loading.indexOf(name);
    if (inProgress >= 0) {
      const cycle = [...loading.slice(inProgress), name].join(' -> ');
      return Promise.reject(makeError('ImportError', `import cycle between skills: ${cycle}`));
    }
    const cached = modules.get(name);
    if (cached) return cached;
    let mod: ModuleSource;
    try {
      mod = sync('skill_module', name) as ModuleSource;
    } catch (err) {
      return Promise.reject(err);
    }
    if (mod.language === 'python') {
      return Promise.reject(makeError('ImportError', `skill ${name} is Python; import it from Python code, or read it with load_skill`));
    }
    loading.push(name);
    const p = (async () => {
      try {
        const factory = call.evaluator().evaluate(mod.source) as () => Promise<unknown>;
        return await factory();
      } finally {
        const i = loading.lastIndexOf(name);
        if (i >= 0) loading.splice(i, 1);
      }
    })();
    modules.set(name, p);
    return p;
  };
}

/** A call's own values: its workspace's name, an empty result, its context_vars. */
export function callValues(task: WorkerTask): Record<string, unknown> {
  const values: Record<string, unknown> = { workspace: task.workspaceName, result: undefined };
  const vars: [string, unknown][] = task.contextJson ? Object.entries(JSON.parse(task.contextJson) as Record<string, unknown>) : [];
  for (const [k, v] of [...vars, ...(task.contextStrings ?? [])]) {
    Object.defineProperty(values, k, { value: v, writable: true, enumerable: true, configurable: true });
  }
  return values;
}

/** One call's complete globals (a realm bound to that call): what the reachability audit walks. */
export function buildGlobals(scope: CallScope, task: WorkerTask, evaluator: () => Evaluator): Record<string, unknown> {
  const cell: CallCell = { call: { scope, task, evaluator } };
  const globals = realmGlobals(cell);
  for (const [k, v] of Object.entries(callValues(task))) {
    Object.defineProperty(globals, k, { value: v, writable: true, enumerable: true, configurable: true });
  }
  return globals;
}

type ToolCall = (server: string, tool: string, args: unknown) => Promise<unknown>;

/** Names a property lookup may ask for without meaning a tool (await, JSON, conversions). */
const NOT_TOOL_NAMES = new Set(['then', 'catch', 'finally', 'toJSON', 'constructor', 'prototype', 'valueOf', 'toString', 'inspect', '__proto__']);
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * `tools.SERVER.TOOL(args)`. Any well-formed name resolves to a function, so
 * `tools.github.create_issue(...)` reaches the host, which answers why it cannot run (not
 * configured, failed to start, not permitted, no such tool) instead of the guest failing with
 * "Cannot read properties of undefined". The servers and tools this agent may call become plain
 * keys (so Object.keys, `in` and printing show them) the first time code enumerates or tests
 * them: only then is the list asked of the host (`listNames`), so an ordinary call neither carries
 * nor builds anything for hundreds of upstream tools. Everything here is made per call.
 */
function toolsObject(listNames: () => unknown, call: ToolCall): Record<string, unknown> {
  // Null-prototype targets: a server or tool named `__proto__` stays a plain key.
  const root: Record<string, unknown> = Object.create(null);
  const targets = new Map<string, Record<string, unknown>>();
  const proxies = new Map<string, Record<string, unknown>>();
  const functions = new Map<string, (args?: unknown) => Promise<unknown>>();
  const tool = (server: string, name: string): ((args?: unknown) => Promise<unknown>) => {
    const key = `${server}\0${name}`;
    let fn = functions.get(key);
    if (!fn) {
      fn = (args?: unknown) => call(server, name, args);
      functions.set(key, fn);
    }
    return fn;
  };
  let listed = false;
  const list = (): void => {
    if (listed) return;
    const names = listNames();
    listed = true;
    for (const qualified of Array.isArray(names) ? names : []) {
      if (typeof qualified !== 'string') continue;
      const dot = qualified.indexOf('.');
      const server = qualified.slice(0, dot);
      const name = qualified.slice(dot + 1);
      namespace(server);
      (targets.get(server) as Record<string, unknown>)[name] = tool(server, name);
      root[server] = proxies.get(server);
    }
  };
  // What enumerates or tests keys lists the tools first; `get` never needs the list.
  const listing = <T extends object>(get: ProxyHandler<T>['get']): ProxyHandler<T> => ({
    get,
    has: (t, key) => (list(), Reflect.has(t, key)),
    ownKeys: (t) => (list(), Reflect.ownKeys(t)),
    getOwnPropertyDescriptor: (t, key) => (list(), Reflect.getOwnPropertyDescriptor(t, key)),
    // Freezing (harden) fixes the keys: they must all be there first.
    preventExtensions: (t) => (list(), Reflect.preventExtensions(t)),
  });
  const namespace = (server: string): Record<string, unknown> => {
    let ns = proxies.get(server);
    if (!ns) {
      const target: Record<string, unknown> = Object.create(null);
      ns = new Proxy(target, listing((t, name) => lookup(t, name, (n) => tool(server, n))));
      targets.set(server, target);
      proxies.set(server, ns);
    }
    return ns;
  };
  return new Proxy(root, listing((t, server) => lookup(t, server, namespace)));
}

function lookup(target: Record<string | symbol, unknown>, key: string | symbol, make: (name: string) => unknown): unknown {
  if (Object.hasOwn(target, key)) return target[key];
  if (typeof key !== 'string' || NOT_TOOL_NAMES.has(key) || !TOOL_NAME.test(key)) return undefined;
  return make(key);
}

interface FetchReply {
  status: number;
  statusText: string;
  url: string;
  headers: [string, string][];
  body: string;
}

function makeResponse(r: FetchReply): unknown {
  const headers = new Map(r.headers.map(([k, v]) => [k.toLowerCase(), v]));
  return harden({
    ok: r.status >= 200 && r.status < 300,
    status: r.status,
    statusText: r.statusText,
    url: r.url,
    headers: {
      get: (name: unknown) => headers.get(String(name).toLowerCase()) ?? null,
      has: (name: unknown) => headers.has(String(name).toLowerCase()),
      entries: () => [...headers.entries()],
    },
    text: async () => r.body,
    json: async () => JSON.parse(r.body) as unknown,
  });
}
