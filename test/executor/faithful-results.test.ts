// Faithful results: any JSON-shaped value comes back as it went in, whatever its keys. Keys that
// name Object.prototype's members (`constructor`, `toString`, `valueOf`, `hasOwnProperty`) once
// came back as "[Unserializable: TypeError …]" with success true (assignment to a key a frozen
// prototype holds read-only fails under lockdown), and `__proto__` from JSON.parse set a prototype.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, ExecutionResult, Language, PooledExecutor } from '../../src/executor/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { toJsonSafe } from '../../workers/kit/serialize.js';
import { FULL_PERMISSIONS, testConfig } from '../fixtures/config.js';

const config = testConfig({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 } });
const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
let executor: PooledExecutor;
const agent: CallIdentity = { agent: 'a', sessionId: 's-a', workspaceNamespace: 'agent-a', permissions: FULL_PERMISSIONS };

function run(code: string, language: Language, contextVars?: Record<string, unknown>): Promise<ExecutionResult> {
  return executor.execute({ code, language, timeoutSeconds: 60, memoryMb: 256, ...(contextVars ? { contextVars } : {}) }, agent);
}

/** JSON text whose keys are every name an object inherits, and `__proto__` as JSON.parse makes it: an own key. */
const TRICKY = '{"constructor":"x","toString":1,"valueOf":[2],"hasOwnProperty":null,"toJSON":"t","then":3,"__proto__":{"a":1},"isPrototypeOf":{"b":[true]},"__defineGetter__":"g","data":[{"constructor":{"name":"n"}}]}';
const EXPECTED = JSON.parse(TRICKY) as Record<string, unknown>;

beforeAll(async () => {
  executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace, logger: silentLogger() }), logger: silentLogger(), workspace });
}, 120_000);

afterAll(async () => {
  await executor.close();
});

describe('results keep every key', () => {
  it('a JavaScript literal with keys named like Object.prototype members', async () => {
    const r = await run("return { constructor: 'x', toString: 'y', valueOf: 3, data: [1, 2] }", 'javascript');
    expect(r).toMatchObject({ success: true, result: { constructor: 'x', toString: 'y', valueOf: 3, data: [1, 2] } });
  });

  it('JSON.parse output in JavaScript, __proto__ included, and the same through a Map', async () => {
    const r = await run(`const v = JSON.parse(${JSON.stringify(TRICKY)}); return { v, m: new Map(Object.entries(v)) }`, 'javascript');
    expect(r.success, r.error).toBe(true);
    const result = r.result as { v: Record<string, unknown>; m: Record<string, unknown> };
    expect(JSON.stringify(result.v)).toBe(TRICKY);
    expect(JSON.stringify(result.m)).toBe(TRICKY);
    expect(Object.getPrototypeOf(result.v)).toBe(Object.prototype);
  });

  it('context_vars come into JavaScript and go back out unchanged', async () => {
    const r = await run('return [ctx, Object.keys(ctx).length, ctx.constructor]', 'javascript', { ctx: EXPECTED });
    expect(r.success, r.error).toBe(true);
    const [back, keys, ctor] = r.result as [unknown, number, unknown];
    expect(JSON.stringify(back)).toBe(TRICKY);
    expect(keys).toBe(Object.keys(EXPECTED).length);
    expect(ctor).toBe('x');
  });

  it('console.log prints such values whole', async () => {
    const r = await run(`console.log(JSON.parse(${JSON.stringify(TRICKY)}))`, 'javascript');
    expect(r.output).toEqual([TRICKY]);
  });

  it('the data helpers read a record\'s own fields only', async () => {
    const r = await run("return [filter_by_field([{a: 1}, {constructor: 'x'}], 'constructor', 'x'), aggregate_stats([{toString: 2}, {a: 1}], ['toString'])]", 'javascript');
    expect(r.result).toEqual([[{ constructor: 'x' }], { count: 2, toString_sum: 2, toString_avg: 1, toString_min: 0, toString_max: 2 }]);
  });

  it('Python results and context_vars keep the same keys', { timeout: 180_000 }, async () => {
    const r = await run(`import json\nresult = [json.loads(${JSON.stringify(TRICKY)}), ctx, {'constructor': 'x', '__proto__': [1]}]`, 'python', { ctx: EXPECTED });
    expect(r.success, r.error).toBe(true);
    const [parsed, ctx, literal] = r.result as unknown[];
    expect(JSON.stringify(parsed)).toBe(TRICKY);
    expect(JSON.stringify(ctx)).toBe(TRICKY);
    expect(JSON.stringify(literal)).toBe('{"constructor":"x","__proto__":[1]}');
  });
});

describe('host-call arguments keep every key', () => {
  it('the conversion every host call uses keeps __proto__ and inherited names as own keys', () => {
    const parsed = JSON.parse(TRICKY) as unknown;
    const converted = toJsonSafe(parsed);
    expect(JSON.stringify(converted)).toBe(TRICKY);
    expect(Object.getPrototypeOf(converted)).toBe(Object.prototype);
  });
});
