// Python's side of the sandbox API table (workers/kit/api-contract.ts): every name the table
// gives Python is there, with nothing beyond it but the standard modules the seed promises; fetch
// is always there and, without a net permission, refuses with the permission's name.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { PYTHON_API_NAMES } from '../../workers/kit/api-contract.js';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

/** The modules and classes the seed puts in the namespace of every call. */
const STANDARD = ['json', 're', 'math', 'statistics', 'collections', 'datetime', 'date', 'timedelta'];
let h: PythonHarness;

beforeAll(async () => {
  h = await startPython();
}, PYTHON_START_MS);

afterAll(async () => {
  await h?.close();
});

it("names exactly the table's Python API and the seed's modules", async () => {
  const r = await h.run('result = sorted(k for k in globals() if not k.startswith("__")) + [k for k in ("print",) if callable(print)]');
  expect(r.success, r.error).toBe(true);
  expect([...new Set(r.result as string[])].sort()).toEqual([...new Set([...PYTHON_API_NAMES, ...STANDARD])].sort());
}, PYTHON_START_MS);

it('has fetch without a net permission, refusing with the permission it needs', async () => {
  const r = await h.run('fetch("https://example.com/")');
  expect(r).toMatchObject({ success: false, error_type: 'PermissionError', error: expect.stringMatching(/net permission/) });
}, PYTHON_START_MS);
