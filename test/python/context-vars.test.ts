// context_vars on their way into Python: long strings cross as UTF-8 bytes beside the JSON of the
// other values (workers/python/python-worker.ts contextForPython), and the Python processes take
// V8's serializer on their channel (runtimes.ts). What arrives must be exactly what was sent
// (astral characters, lone surrogates, nesting), limits still refuse clearly, two agents' context
// never meet, a host answer that is not JSON data cannot take the daemon down, and large results
// (shaped by workers/python/py/bridge.py, sent as ASCII JSON) come back whole.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';
import { PYTHON_START_MS } from './helpers.js';

let executor: PooledExecutor;

const identity = (agent: string): CallIdentity => ({ agent, sessionId: `session-${agent}`, workspaceNamespace: agent, permissions: FULL_PERMISSIONS });

function run(code: string, contextVars?: Record<string, unknown>, agent = 'alice'): Promise<ExecutionResult> {
  return executor.execute({ code, language: 'python', timeoutSeconds: 60, memoryMb: 500, ...(contextVars ? { contextVars } : {}) }, identity(agent));
}

/** What Python should see of `text`: its length in code points and the sum of their values. */
function fingerprint(text: string): { len: number; sum: number } {
  let len = 0;
  let sum = 0;
  for (const ch of text) {
    len++;
    sum += ch.codePointAt(0) as number;
  }
  return { len, sum };
}

const FINGERPRINT_PY = (name: string): string => `{'len': len(${name}), 'sum': sum(map(ord, ${name}))}`;

beforeAll(async () => {
  const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 2 } });
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const logger = silentLogger();
  // An upstream tool whose answers are not JSON data: a function inside, or a BigInt.
  const call_tool = async ([, tool]: readonly unknown[]): Promise<unknown> => (tool === 'bigint' ? { n: 10n } : { ok: true, fn: () => 1 });
  const hostApi = createHostApi({ config, workspace, logger, extensions: { call_tool }, toolNames: () => ['odd.fn', 'odd.bigint'] });
  executor = await createExecutor({ config, hostApi, logger, workspace });
  for (const agent of ['alice', 'bob']) {
    const first = await executor.execute({ code: 'result = 1', language: 'python', timeoutSeconds: PYTHON_START_MS / 1000 - 10, memoryMb: 500 }, identity(agent));
    expect(first.success, `${first.error_type}: ${first.error}`).toBe(true);
  }
}, PYTHON_START_MS * 2);

afterAll(async () => {
  await executor?.close();
});

describe('long context_vars reach Python intact', () => {
  it('a megabyte of JSON text, parsed by the code itself (the data snippet)', async () => {
    const records = Array.from({ length: 14_000 }, (_, i) => ({ id: i, status: i % 3 === 0 ? 'active' : 'inactive', score: i % 100, name: `user-${i}` }));
    const raw = JSON.stringify(records);
    const code = "data = json.loads(raw)\nactive = [d for d in data if d['status'] == 'active' and d['score'] > 50]\nresult = {'count': len(active), 'top': [d['id'] for d in active[:3]], 'len': len(raw)}";
    const r = await run(code, { raw });
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    const active = records.filter((d) => d.status === 'active' && d.score > 50);
    expect(r.result).toEqual({ count: active.length, top: active.slice(0, 3).map((d) => d.id), len: raw.length });
  });

  it('astral characters, CJK, quotes, backslashes, NUL and newlines', async () => {
    const text = `"\\\u0000\n\t é 中文 😀 𝄞 ${'ab"c\\'.repeat(20_000)} end 👍`;
    const r = await run(`result = ${FINGERPRINT_PY('text')}`, { text });
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    expect(r.result).toEqual(fingerprint(text));
  });

  it('a long string with a lone surrogate keeps it (UTF-8 cannot carry one)', async () => {
    const text = `\ud800${'x'.repeat(40_000)}\udfff`;
    const r = await run("result = [ord(text[0]), ord(text[-1]), len(text)]", { text });
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    expect(r.result).toEqual([0xd800, 0xdfff, 40_002]);
  });

  it('several long strings beside short values and nested structures (with long strings inside)', async () => {
    const a = 'α'.repeat(50_000);
    const b = 'b'.repeat(33_000);
    const nested = { deep: [{ text: 'z'.repeat(40_000), n: [1, 2.5, null, true] }], empty: '' };
    const code = `result = {'a': ${FINGERPRINT_PY('a')}, 'b': len(b), 'n': n, 's': s, 'deep': len(nested['deep'][0]['text']), 'rest': nested['deep'][0]['n'], 'empty': nested['empty'], 'none': none}`;
    const r = await run(code, { a, n: 7, b, s: 'short', nested, none: null });
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    expect(r.result).toEqual({ a: fingerprint(a), b: 33_000, n: 7, s: 'short', deep: 40_000, rest: [1, 2.5, null, true], empty: '', none: null });
  });

  it('a large structure without long strings (long JSON text) arrives whole', async () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ i, name: `n${i}é😀`, tags: ['a', 'b'], score: i / 3 }));
    const r = await run("result = [len(rows), rows[-1], sum(r['i'] for r in rows)]", { rows });
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    expect(r.result).toEqual([5_000, rows[4_999], (4_999 * 5_000) / 2]);
  });

  it('a long string context var is a plain str the code may change', async () => {
    const r = await run("text = text.upper()\nresult = [type(text).__name__, text[:3], len(text)]", { text: 'abc'.repeat(20_000) });
    expect(r.result).toEqual(['str', 'ABC', 60_000]);
  });
});

describe('large results come back intact', () => {
  it('records with accents, CJK, astral characters and a lone surrogate', async () => {
    const code = "result = {'rows': [{'id': i, 'name': f'é{i}中😀', 'tags': ['a', i % 7 == 0], 'score': i / 4} for i in range(300)], 'lone': '\\ud800'}";
    const r = await run(code);
    expect(r.success, `${r.error_type}: ${r.error}`).toBe(true);
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `é${i}中😀`, tags: ['a', i % 7 === 0], score: i / 4 }));
    expect(r.result).toEqual({ rows, lone: '\ud800' });
  });
});

describe('limits and isolation', () => {
  it('context_vars past the limit are refused before any sandbox sees them, naming the limit', async () => {
    const r = await run('result = 1', { big: 'x'.repeat(16 * 1024 * 1024) });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('ValidationError');
    expect(r.error).toMatch(/context_vars is 16777\d+ characters of JSON; the limit is 16777216/);
    const bad = await run('result = 1', { n: 1n });
    expect(bad.error).toBe('context_vars must be JSON data');
  });

  it("one agent's long context_vars are never seen by another agent, nor by its own next call", async () => {
    const secret = `alice-secret-${'s'.repeat(40_000)}`;
    const mine = await run("result = secret[:12]", { secret }, 'alice');
    expect(mine.result).toBe('alice-secret');
    const theirs = await run("result = ['secret' in globals(), [k for k in globals() if 'alice' in repr(globals()[k])[:100]]]", undefined, 'bob');
    expect(theirs.success, `${theirs.error_type}: ${theirs.error}`).toBe(true);
    expect(theirs.result).toEqual([false, []]);
    const next = await run("result = 'secret' in globals()", undefined, 'alice');
    expect(next.result).toBe(false);
  });

  it('a host answer that is not JSON data fails that host call; the daemon serves on', async () => {
    const fn = await run('result = tools.odd.fn()');
    expect(fn.success, `${fn.error_type}: ${fn.error}`).toBe(true);
    expect(fn.result).toEqual({ ok: true });
    const big = await run('result = tools.odd.bigint()');
    expect(big.success).toBe(false);
    expect(big.error).toMatch(/BigInt/);
    const other = await run('result = 2 + 2', undefined, 'bob');
    expect(other.result).toBe(4);
  });
});
