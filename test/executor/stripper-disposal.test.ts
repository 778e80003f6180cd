// A stripper that trapped is thrown away with its memory, once, and never tried again in place.
// Before: each trap reloaded amaro twice through one long-lived require, which kept every dead
// instance as a child module (source, compiled WebAssembly, memory): about 6 MB a load, so a thread
// that every agent shares grew by about 11 MB per trapping call until its heap limit killed it.

import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stripperLoads, stripperTraps, stripTypeScript } from '../../workers/js/strip-types.js';
import { TRAPPING_LENGTH, TRAPPING_SHAPES } from './fixtures/trapping-typescript.js';

const built = pathToFileURL(path.resolve(import.meta.dirname, '../../dist/workers/js/strip-types.js')).href;
const shapes = Object.entries(TRAPPING_SHAPES);
/** Trapping code, a different text each time (a cache never answers for the stripper). */
const trapping = (calls: number): string[] => Array.from({ length: calls }, (_, i) => `let v${i}: number = 1;\n${(shapes[i % shapes.length] as [string, (n: number) => string])[1](TRAPPING_LENGTH)}`);

/**
 * Strips each of `codes` (all trap), then an ordinary one: how much the process grew over all but
 * the first 20 (a plateau: the allocator keeps some of what it freed), and what the last said.
 */
const SCRIPT = `
  const { stripTypeScript, stripperLoads, stripperTraps } = await import(${JSON.stringify(built)});
  stripTypeScript('let warm: number = 1', 'strip-only');
  for (const code of codes.slice(0, 20)) stripTypeScript(code, 'strip-only');
  globalThis.gc?.();
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  for (const code of codes.slice(20)) stripTypeScript(code, 'strip-only');
  globalThis.gc?.();
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  const last = stripTypeScript('let n: number = 1', 'strip-only');
  return { growthMb: (after - before) / 1048576, loads: stripperLoads(), traps: stripperTraps(), last };
`;

describe('a trapped stripper is disposed of, not retried', () => {
  it('answers each trapping shape with the clear error (or runs it), loads one fresh stripper per trap, and strips the next code', () => {
    stripTypeScript('let warm: number = 1', 'strip-only');
    let trapped = 0;
    for (const [name, make] of shapes) {
      const loads = stripperLoads();
      const traps = stripperTraps();
      const r = stripTypeScript(`let x: number = 1;\n${make(TRAPPING_LENGTH)}`, 'strip-only');
      // A chain that needs a deeper stack than this thread's to trap is stripped: that is fine too.
      if (!r.ok) {
        trapped++;
        expect(r.diagnostic, name).toMatchObject({ trapped: true, message: expect.stringMatching(/^TypeScript too deeply nested for the type stripper: .*pass language "javascript"/) });
      }
      expect([stripperTraps() - traps, stripperLoads() - loads], name).toEqual(r.ok ? [0, 0] : [1, 1]);
      expect(stripTypeScript('let n: number = 1', 'strip-only'), name).toEqual({ ok: true, code: 'let n         = 1' });
    }
    expect(trapped).toBeGreaterThanOrEqual(shapes.length - 4);
  });

  it('keeps a thread with a 64 MB heap alive through 40 traps', async () => {
    const worker = new Worker(`(async () => { const { parentPort, workerData: codes } = require('node:worker_threads'); parentPort.postMessage(await (async () => {${SCRIPT}})()); })()`, {
      eval: true,
      workerData: trapping(40),
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    const outcome = await new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    }).finally(() => worker.terminate());
    // Some chains need more than this length to trap on a thread's bigger stack; every trap cost one load.
    const { traps, loads, last } = outcome as { traps: number; loads: number; last: unknown };
    expect(traps).toBeGreaterThanOrEqual(34);
    expect({ loads, last }).toEqual({ loads: traps + 1, last: { ok: true, code: 'let n         = 1' } });
  }, 300_000);

  it('gives the memory of dead strippers back (30 more traps grow the process by under 40 MB, not 11 MB a trap)', () => {
    const read = "const codes = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));";
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', `(async () => { ${read} console.log(JSON.stringify(await (async () => {${SCRIPT}})())); })()`], {
      input: JSON.stringify(trapping(50)),
      encoding: 'utf8',
      timeout: 300_000,
    });
    const r = JSON.parse(out) as { growthMb: number; traps: number };
    expect(r.traps).toBe(50);
    expect(r.growthMb).toBeLessThan(40);
  }, 300_000);
});
