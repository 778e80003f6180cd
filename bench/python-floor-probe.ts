// Pyodide's own floor for the python-light data snippet: an interpreter started the way a Python
// worker starts it (workers/python/engine.ts), the snippet run in it directly with `raw` already a
// Python string, a fresh globals dict per run as the seed's runner does: no coordinator, IPC,
// thread, context crossing or clean-up. Prints {p50} (ms) as JSON. A process of its own (lockdown).

import fs from 'node:fs';
import type { PyProxy } from 'pyodide/ffi';

const write = fs.writeSync.bind(fs);
await import('ses');
const { startPython } = await import('../workers/python/engine.js');
const { DATA_PY, records } = await import('./python-data.js');
const bridge = { sync: () => 'jnull', async: () => Promise.resolve('jnull'), emit: () => {}, done: () => {} };
const engine = await startPython(bridge, () => {}, process.argv[2] || undefined);
const runs = Number(process.argv[3] ?? 20);
const ns = engine.pyodide.runPython('{}') as PyProxy & { set(key: string, value: unknown): void };
ns.set('RAW', records());
ns.set('CODE', DATA_PY);
ns.set('RUNS', runs);
const out = engine.pyodide.runPython(
  [
    'import json, time',
    "code = compile(CODE, '<sandbox>', 'exec')",
    'raw = str(RAW)',
    'times = []',
    'for _ in range(RUNS + 3):',
    '    t = time.perf_counter()',
    "    g = {'json': json, 'raw': raw}",
    '    exec(code, g)',
    '    times.append((time.perf_counter() - t) * 1000)',
    'times = sorted(times[3:])',
    "json.dumps({'p50': times[len(times) // 2], 'count': g['result']['count']})",
  ].join('\n'),
  { globals: ns },
) as string;
write(1, `${out}\n`);
process.exit(0);
