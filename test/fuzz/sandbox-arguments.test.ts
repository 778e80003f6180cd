// Property-based fuzzing of the sandbox API's arguments (issue 33 item 5): random values handed to
// read_file, write_file, list_files, save_skill, load_skill, tokenize_pii, detokenize_pii,
// search_tools and tools.SERVER.TOOL from inside execute_code, on one real daemon. Each call may
// fail, but as the guest's own error: the call is answered as a tool result (never a protocol
// error), no error-level log line is written, and a bystander agent is served throughout.

import fc from 'fast-check';
import { expect, it } from 'vitest';
import { bystanderServed, errorsSince, fuzzDaemonForSuite, PROTO_KEYS } from './fuzz-daemon.js';

const daemon = fuzzDaemonForSuite();

const nasty = fc.oneof(fc.constantFrom(...PROTO_KEYS, '', '.', '..', '../x', '/etc/passwd', 'a/../../b', '%2e%2e/x', 'servers/x', 'outputs', '\u0000', 'a'.repeat(300)), fc.string({ maxLength: 40 }));
const arg: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    nasty,
    fc.oneof(fc.integer(), fc.double(), fc.constant(1e308)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(nasty, fc.constantFrom(...PROTO_KEYS)), tie('v'), { maxKeys: 3 }),
  ),
})).v;

const CALLS = ['read_file', 'write_file', 'list_files', 'delete_file', 'save_skill', 'load_skill', 'import_skill', 'tokenize_pii', 'detokenize_pii', 'search_tools'] as const;
/** One sandbox call: a function and up to four random arguments; or a tool of a random server. */
const call = fc.oneof(
  fc.record({ fn: fc.constantFrom(...CALLS), args: fc.array(arg, { maxLength: 4 }) }),
  fc.record({ fn: fc.constant('tools'), server: nasty, tool: nasty, args: fc.array(arg, { maxLength: 1 }) }),
);

/** Guest code that makes each call with the values as given (JSON, so `__proto__` arrives as an own key), catching what it throws. */
function codeFor(calls: readonly { fn: string; server?: string; tool?: string; args: unknown[] }[]): string {
  const lines = calls.map((c) => {
    const args = `JSON.parse(${JSON.stringify(JSON.stringify(c.args))})`;
    const target = c.fn === 'tools' ? `tools[${JSON.stringify(c.server)}]?.[${JSON.stringify(c.tool)}]` : c.fn;
    return `try { const f = ${target}; if (typeof f === 'function') await f(...${args}); out.push('ok') } catch (e) { out.push(String(e && e.name)) }`;
  });
  return `const out = [];\n${lines.join('\n')}\nreturn out;`;
}

it('answers random arguments to every sandbox function with the guest\'s own errors, no error-level log line, and a bystander served', async () => {
  const d = daemon();
  const from = d.records.length;
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), async (calls) => {
      const r = await d.fuzzer.callTool({ name: 'execute_code', arguments: { code: codeFor(calls), language: 'javascript', timeout_seconds: 20 } });
      const s = r.structuredContent as { success?: boolean; result?: unknown; error?: string; error_type?: string } | undefined;
      expect(s, JSON.stringify(r).slice(0, 500)).toBeDefined();
      // The code catches every call's failure, so the call itself succeeds.
      expect(s?.success, `${s?.error_type}: ${s?.error}`).toBe(true);
      for (const name of s?.result as string[]) seen.set(name, (seen.get(name) ?? 0) + 1);
      expect(errorsSince(d.records, from).map((e) => `${e.msg} ${JSON.stringify(e['err'] ?? '')}`.slice(0, 300))).toEqual([]);
    }),
    { numRuns: 30, seed: Number(process.env['FUZZ_SEED'] ?? 20260728) },
  );
  // Refusals reach the guest by guest names, never as a daemon class or an internal error.
  for (const name of seen.keys()) expect(['ok', 'TypeError', 'ValueError', 'RangeError', 'ImportError', 'PermissionError', 'FileNotFoundError', 'WorkspaceError', 'QuotaExceededError', 'ToolError', 'SyntaxError']).toContain(name);
  await bystanderServed(d);
}, 120_000);
