// One Pyodide interpreter started the way a Python worker starts it (workers/python/engine.ts),
// from the memory snapshot in argv[2] or cold without it; prints {startupMs, fromSnapshot, phases}
// as JSON (phases: where startupMs went, PythonEngine.startupPhases).
// A process of its own per start: bench/python-light-bench.ts runs it for both kinds in turn.

import fs from 'node:fs';

// The engine makes the thread's host powers inert (console included): write through a saved fd call.
const write = fs.writeSync.bind(fs);
await import('ses');
const { startPython } = await import('../workers/python/engine.js');
const bridge = { sync: () => 'jnull', async: () => Promise.resolve('jnull'), emit: () => {}, done: () => {} };
const engine = await startPython(bridge, () => {}, process.argv[2] || undefined);
write(1, `${JSON.stringify({ startupMs: engine.startupMs, fromSnapshot: engine.fromSnapshot, phases: engine.startupPhases })}\n`);
