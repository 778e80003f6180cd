// Property-based fuzzing of both revisions' request parsing on one real daemon (issue 33 item 5):
// random JSON-RPC bodies (odd shapes, prototype keys, huge numbers, deep nesting, bodies that are
// not JSON), stateless `_meta` of random shapes, and `skill://` / `workspace://` URIs with odd
// percent escapes. Whatever arrives: never a 500, never an error-level log line, and a bystander
// agent is served throughout. Run counts are bounded so the file takes seconds.

import fc from 'fast-check';
import { expect, it } from 'vitest';
import { bystanderServed, errorsSince, fuzzDaemonForSuite, post, PROTO_KEYS, STATELESS } from './fuzz-daemon.js';

const daemon = fuzzDaemonForSuite();

const METHODS = ['initialize', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'prompts/list', 'ping', 'server/discover', 'skills/list', 'skills/get', 'logging/setLevel', 'notifications/cancelled', 'completion/complete', ...PROTO_KEYS];
const TOOLS = ['execute_code', 'search_tools', 'get_tool_definition', 'save_skill', 'load_skill', 'read_workspace_file', 'write_workspace_file', 'restore_pii', 'sanitize_pii', ...PROTO_KEYS];

/** Strings a parser trips on: prototype keys, broken % escapes, lone surrogates, huge numerals. */
const nasty = fc.oneof(
  fc.constantFrom(...PROTO_KEYS, '%', '%E0%A4%A', '%ZZ', '%%', '%00', '%C0%AF', '..%2F..%2Fetc%2Fpasswd', '\uD800', '1e309', '-0', 'NaN', '9'.repeat(400)),
  fc.string(),
  fc.webPath(),
);
const weirdNumber = fc.oneof(fc.double(), fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -1, 0, 1e308), fc.integer());
/** JSON values with nasty keys and strings, nested a little. */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nasty,
    weirdNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(nasty, fc.constantFrom(...PROTO_KEYS)), tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** Deep nesting, past what a careless recursive walk survives. */
const deep = fc.integer({ min: 50, max: 5000 }).map((n) => '['.repeat(n) + ']'.repeat(n));

const meta = fc.oneof(
  fc.constant({ 'io.modelcontextprotocol/protocolVersion': STATELESS, 'io.modelcontextprotocol/clientCapabilities': {} }),
  fc.record({ 'io.modelcontextprotocol/protocolVersion': fc.oneof(fc.constant(STATELESS), nasty), 'io.modelcontextprotocol/clientCapabilities': value, 'io.modelcontextprotocol/logLevel': fc.oneof(fc.constantFrom(...PROTO_KEYS, 'debug', 'emergency'), value) }, { requiredKeys: [] }),
  value,
);

const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), value),
    id: fc.oneof(fc.integer(), fc.string(), weirdNumber, value),
    method: fc.oneof(fc.constantFrom(...METHODS), nasty),
    params: fc.oneof(
      fc.record({ name: fc.oneof(fc.constantFrom(...TOOLS), nasty), arguments: value, uri: fc.oneof(nasty.map((s) => `skill://${s}/SKILL.md`), nasty.map((s) => `skill://x/${s}`), nasty.map((s) => `workspace://${s}`)), _meta: meta, cursor: value }, { requiredKeys: [] }),
      value,
    ),
  },
  { requiredKeys: [] },
);

/** What a request carries: a message (or a batch, or raw text) and headers of either revision. */
const request = fc.record({
  body: fc.oneof(
    { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: deep },
    { weight: 1, arbitrary: fc.oneof(fc.string(), fc.constantFrom('{', '{"jsonrpc":', 'null', '1e999999', '{"__proto__":{"polluted":1}}')) },
  ),
  stateless: fc.boolean(),
  version: fc.oneof(fc.constant(STATELESS), fc.constant('2025-11-25'), nasty),
  method: fc.oneof(fc.constantFrom(...METHODS), nasty),
  session: fc.option(fc.oneof(fc.uuid(), nasty), { nil: undefined }),
});

/** Header values must be ISO-8859-1 and single-line; anything else is for fetch to refuse, not the daemon. */
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, '?');

it('answers every random request of either revision without a 500 or an error-level log line, and keeps serving a bystander', async () => {
  const d = daemon();
  const from = d.records.length;
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const headers: Record<string, string> = r.stateless
        ? { 'MCP-Protocol-Version': headerSafe(r.version), 'Mcp-Method': headerSafe(r.method) }
        : { ...(r.session !== undefined && { 'Mcp-Session-Id': headerSafe(r.session) }), 'MCP-Protocol-Version': headerSafe(r.version) };
      const answer = await post(d.url, r.body, headers);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      expect(answer.status, `${answer.status} for ${r.body.slice(0, 300)}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
      expect(errorsSince(d.records, from).map((e) => e.msg)).toEqual([]);
    }),
    { numRuns: 150, seed: Number(process.env['FUZZ_SEED'] ?? 20260728) },
  );
  await bystanderServed(d);
  expect(Object.prototype).not.toHaveProperty('polluted');
}, 60_000);

it('reads skill:// and workspace:// URIs with any escapes as JSON-RPC answers, never a 500', async () => {
  const d = daemon();
  const from = d.records.length;
  const uri = fc.oneof(nasty.map((s) => `skill://${s}/index.js`), nasty.map((s) => `skill://${s}/SKILL.md`), nasty.map((s) => `skill://a/${s}`), nasty.map((s) => `workspace://${s}`));
  await fc.assert(
    fc.asyncProperty(uri, fc.constantFrom('resources/read', 'skills/get'), async (u, method) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { uri: u, _meta: { 'io.modelcontextprotocol/protocolVersion': STATELESS, 'io.modelcontextprotocol/clientCapabilities': {} } } });
      const answer = await post(d.url, body, { 'MCP-Protocol-Version': STATELESS, 'Mcp-Method': method, ...(method === 'resources/read' && { 'Mcp-Name': headerSafe(u) }) });
      expect(answer.status, `${answer.status} for ${u}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
    }),
    { numRuns: 80, seed: Number(process.env['FUZZ_SEED'] ?? 20260728) },
  );
  expect(errorsSince(d.records, from).map((e) => e.msg)).toEqual([]);
  await bystanderServed(d);
}, 60_000);
