// The sandbox API in one table: every name guest code sees, how it behaves, and which side
// implements it. The JavaScript globals, the Python prelude's host methods, the coordinator's
// host methods, the catalog's `sandbox` entries and the reachability audit are derived from this
// table or checked against it by tests, so a new endowment cannot skip the audit. Plain data only:
// the coordinator imports this file too.

/**
 * - 'host-sync': blocks the guest until the coordinator answers (Atomics.wait);
 * - 'host-async': a promise the coordinator settles;
 * - 'guest': implemented inside the worker, no host round trip;
 * - 'value': plain data set per call.
 */
export type ApiKind = 'host-sync' | 'host-async' | 'guest' | 'value';

export interface ApiEntry {
  readonly name: string;
  readonly kind: ApiKind;
  /** The coordinator method it calls (src/executor/host-api.ts and src/sandbox-api/). */
  readonly hostMethod?: string;
  /** JavaScript signature as documented. */
  readonly js: string;
  /** Python signature (the seed's), or null when Python has no such name. */
  readonly python: string | null;
  /** Documented by catalog/sandbox/NAME.json (searchable with search_tools). */
  readonly catalog: boolean;
}

const e = (name: string, kind: ApiKind, js: string, python: string | null, extra: { hostMethod?: string; catalog?: boolean } = {}): ApiEntry =>
  Object.freeze({ name, kind, js, python, catalog: extra.catalog ?? false, ...(extra.hostMethod ? { hostMethod: extra.hostMethod } : {}) });

export const SANDBOX_API: readonly ApiEntry[] = Object.freeze([
  // Output and time.
  e('console', 'guest', 'console.log|info|debug|warn|error|trace|dir|table(...values)', null),
  e('print', 'guest', 'print(...values): void', 'print(*values)'),
  e('setTimeout', 'guest', 'setTimeout(fn, ms?, ...args): number', null),
  e('clearTimeout', 'guest', 'clearTimeout(id): void', null),
  e('setInterval', 'guest', 'setInterval(fn, ms?, ...args): number', null),
  e('clearInterval', 'guest', 'clearInterval(id): void', null),
  e('queueMicrotask', 'guest', 'queueMicrotask(fn): void', null),
  e('sleep', 'guest', 'sleep(ms): Promise<void>', 'sleep(ms)', { catalog: true }),
  // Standard classes and functions the platform usually has (guest-realm facades or hardened).
  e('Date', 'guest', 'Date (working now() and new Date())', null),
  e('Math', 'guest', 'Math (working random())', null),
  e('URL', 'guest', 'URL (WHATWG URL; a facade over Node\'s parser)', null),
  e('URLSearchParams', 'guest', 'URLSearchParams', null),
  e('TextEncoder', 'guest', 'TextEncoder', null),
  e('TextDecoder', 'guest', 'TextDecoder', null),
  e('atob', 'guest', 'atob(base64): string', null),
  e('btoa', 'guest', 'btoa(binary): string', null),
  e('structuredClone', 'guest', 'structuredClone(value): value', null),
  e('Float32Array', 'guest', 'Float32Array (the intrinsic)', null),
  e('Float64Array', 'guest', 'Float64Array (the intrinsic)', null),
  e('crypto', 'guest', 'crypto.randomUUID(): string; crypto.getRandomValues(typedArray)', null),
  // Workspace.
  e('workspace', 'value', 'workspace: string', 'workspace'),
  e('read_file', 'host-sync', 'read_file(path: string): string', 'read_file(path)', { hostMethod: 'read_file', catalog: true }),
  e('write_file', 'host-sync', 'write_file(path: string, content: string): string', 'write_file(path, content)', { hostMethod: 'write_file', catalog: true }),
  e('list_files', 'host-sync', 'list_files(subpath?: string): FileInfo[]', "list_files(subpath='.')", { hostMethod: 'list_files', catalog: true }),
  e('delete_file', 'host-sync', 'delete_file(path: string): string', 'delete_file(path)', { hostMethod: 'delete_file', catalog: true }),
  // Skills.
  e('save_skill', 'host-sync', 'save_skill(name, code, description?, language?, options?: {shared?: boolean}): object', "save_skill(name, code, description='', language=None, shared=False)", { hostMethod: 'save_skill', catalog: true }),
  e('load_skill', 'host-sync', 'load_skill(name): string', 'load_skill(name)', { hostMethod: 'load_skill', catalog: true }),
  e('list_skills', 'host-sync', 'list_skills(): object', 'list_skills()', { hostMethod: 'list_skills', catalog: true }),
  e('import_skill', 'host-sync', 'import_skill(name): Promise<exports>', 'import_skill(name)', { hostMethod: 'skill_module', catalog: true }),
  // PII.
  e('tokenize_pii', 'host-sync', 'tokenize_pii(text): {text, tokens, ...}', 'tokenize_pii(text) -> (text, tokens)', { hostMethod: 'tokenize_pii', catalog: true }),
  e('detokenize_pii', 'host-sync', 'detokenize_pii(text): string', 'detokenize_pii(text, tokens=None)', { hostMethod: 'detokenize_pii', catalog: true }),
  // The seed's data helpers.
  e('filter_by_field', 'guest', 'filter_by_field(data, field, value): object[]', 'filter_by_field(data, field, value)', { catalog: true }),
  e('summarize_list', 'guest', 'summarize_list(data, limit?): object', 'summarize_list(data, limit=10)', { catalog: true }),
  e('aggregate_stats', 'guest', 'aggregate_stats(data, numericFields?): object', 'aggregate_stats(data, numeric_fields=None)', { catalog: true }),
  e('format_output', 'guest', 'format_output(data, maxChars?): string', 'format_output(data, max_chars=5000)', { catalog: true }),
  // Discovery and tools.
  e('search_tools', 'host-sync', 'search_tools(query, {category, detail_level, limit}?): object', 'search_tools(query, options=None, **kwargs)', { hostMethod: 'search_tools', catalog: true }),
  e('tools', 'host-async', 'tools.SERVER.TOOL(args): Promise<result>', 'tools.SERVER.TOOL(args)', { hostMethod: 'call_tool' }),
  e('fetch', 'host-async', 'fetch(url, init?): Promise<Response>', "fetch(url, method='GET', headers=None, body=None)", { hostMethod: 'fetch', catalog: true }),
  e('result', 'value', 'result (assign it, or return a value)', 'result'),
]);

/** Names the sandbox API defines in JavaScript; context_vars may not shadow them. */
export const SANDBOX_API_NAMES: readonly string[] = Object.freeze(SANDBOX_API.map((x) => x.name));

/** Coordinator methods the guest may reach, by name. */
export const HOST_METHODS: readonly string[] = Object.freeze([...new Set(SANDBOX_API.flatMap((x) => (x.hostMethod ? [x.hostMethod] : [])))]);

/** Host methods whose answer a guest may await instead of blocking on it. */
export const ASYNC_HOST_METHODS: readonly string[] = Object.freeze(SANDBOX_API.filter((x) => x.kind === 'host-async' && x.hostMethod).map((x) => x.hostMethod as string));

/** Names Python code has (besides its standard modules). */
export const PYTHON_API_NAMES: readonly string[] = Object.freeze(SANDBOX_API.filter((x) => x.python !== null).map((x) => x.name));
