// Interpreters from the memory snapshot (workers/python/snapshot.ts): the file is keyed by the
// Pyodide build and the prelude, a file that is not intact or not Pyodide's own is rebuilt and
// never trusted, and an interpreter restored from it is sealed and checked like a cold one (two
// agents: nothing of one reaches the other, the prelude's compiled code is not left behind).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonSnapshotDir } from '../../src/executor/python-pool.js';
import { PYTHON_FILES, preludeSource, readPython, snapshotSource } from '../../workers/python/prelude.js';
import { PRELUDE_PY, SNAPSHOT_PY, readSnapshot, snapshotFile, writeSnapshot } from '../../workers/python/snapshot.js';
import { SANDBOX_API } from '../../workers/kit/api-contract.js';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'cem-snapshot-'));
}

describe('the snapshot file', () => {
  it('is named by a key that changes with the prelude', () => {
    const dir = tempDir();
    expect(snapshotFile(dir)).toBe(snapshotFile(dir));
    expect(snapshotFile(dir, `${PRELUDE_PY}\n# changed`)).not.toBe(snapshotFile(dir));
    expect(path.basename(snapshotFile(dir))).toMatch(/^pyodide-[\d.]+-[0-9a-f]{24}\.snap$/);
  });

  it('is named by a key that changes with any one .py file, and with the API table', () => {
    const dir = tempDir();
    expect([snapshotSource(), preludeSource()]).toEqual([SNAPSHOT_PY, PRELUDE_PY]);
    for (const file of PYTHON_FILES) {
      const read = (f: string): string => (f === file ? `${readPython(f)}\n# changed` : readPython(f));
      expect(snapshotFile(dir, preludeSource(read), snapshotSource(read)), file).not.toBe(snapshotFile(dir));
    }
    const table = SANDBOX_API.map((x) => (x.name === 'read_file' ? { ...x, python: 'read_file(path, encoding=None)' } : x));
    expect(snapshotFile(dir, preludeSource(readPython, table))).not.toBe(snapshotFile(dir));
  });

  it('reads back what was written, and replaces snapshots of other keys', () => {
    const dir = tempDir();
    const old = path.join(dir, 'pyodide-0.0.1-000000000000000000000000.snap');
    writeFileSync(old, 'an older snapshot');
    const file = snapshotFile(dir);
    const body = new Uint8Array(4096).map((_, i) => i % 251);
    writeSnapshot(file, body);
    expect(Buffer.from(readSnapshot(file) as Uint8Array).equals(Buffer.from(body))).toBe(true);
    expect(existsSync(old)).toBe(false);
  });

  it('keeps only the pages that are not all zeros, and reads back the zeros in between and at the end', () => {
    const dir = tempDir();
    const file = snapshotFile(dir);
    const page = 64 * 1024;
    // Data, two zero pages, data, a zero page, a partial last page of data, then trailing zeros.
    const body = new Uint8Array(6 * page + 1000);
    body.fill(3, 0, page);
    body.fill(5, 3 * page, 3 * page + 10);
    body[5 * page + 999] = 9;
    const tail = new Uint8Array(body.length + 3 * page);
    tail.set(body);
    for (const snapshot of [body, tail]) {
      writeSnapshot(file, snapshot);
      expect(statSync(file).size).toBeLessThan(4 * page);
      const back = readSnapshot(file) as Uint8Array;
      expect(back.length).toBe(snapshot.length);
      expect(Buffer.from(back).equals(Buffer.from(snapshot))).toBe(true);
      // Pyodide reads it as 32-bit words: it starts its own aligned buffer.
      expect(back.byteOffset).toBe(0);
    }
  });

  it('is deleted, not trusted, when its checksum does not match (a flipped byte, a cut file, garbage)', () => {
    const dir = tempDir();
    const file = snapshotFile(dir);
    const body = new Uint8Array(4096).fill(7);
    const flipLast = (b: Buffer): Buffer => {
      const copy = Buffer.from(b);
      copy.writeUInt8(copy.readUInt8(copy.length - 1) ^ 1, copy.length - 1);
      return copy;
    };
    const flipAt = (at: number) => (b: Buffer): Buffer => {
      const copy = Buffer.from(b);
      copy.writeUInt8(copy.readUInt8(at) ^ 1, at);
      return copy;
    };
    const damages = [
      flipLast,
      (b: Buffer) => b.subarray(0, b.length - 16),
      () => Buffer.from('not a snapshot at all'),
      (b: Buffer) => Buffer.concat([b, Buffer.from([0])]),
      // The checksum, the snapshot's length (and one of terabytes, refused before allocating), the run count, a run's offset.
      flipAt(9),
      flipAt(13),
      flipAt(17),
      flipAt(20),
      flipAt(24),
    ];
    for (const damage of damages) {
      writeSnapshot(file, body);
      writeFileSync(file, damage(readFileSync(file)));
      expect(readSnapshot(file)).toBeUndefined();
      expect(existsSync(file)).toBe(false);
    }
  });
});

describe('interpreters when the snapshot is damaged or foreign', () => {
  it(
    'rebuilds a snapshot whose checksum is right but whose content is not a Pyodide snapshot, and runs',
    async () => {
      const dataDir = tempDir();
      const file = snapshotFile(pythonSnapshotDir({ dataDir }));
      mkdirSync(path.dirname(file), { recursive: true });
      // Intact to our checksum, refused by Pyodide's own magic and build checks.
      const body = Buffer.alloc(64 * 1024, 1);
      writeSnapshot(file, body);
      expect(readSnapshot(file)).toBeInstanceOf(Uint8Array);
      const py = await startPython({ dataDir });
      try {
        const r = await py.run('import sys\nresult = sum([1, 2, 3])');
        expect(r.error).toBeUndefined();
        expect(r.result).toBe(6);
        // Made again from a real interpreter: intact, and not the foreign bytes.
        const rebuilt = readSnapshot(file);
        expect(rebuilt).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(rebuilt as Uint8Array).subarray(0, 16).equals(body.subarray(0, 16))).toBe(false);
      } finally {
        await py.close();
      }
    },
    PYTHON_START_MS * 2,
  );
});

describe('interpreters restored from the snapshot', () => {
  let py: PythonHarness;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDir();
    py = await startPython({ dataDir });
  }, PYTHON_START_MS);
  afterAll(async () => {
    await py?.close();
  });

  it('were made from the snapshot kept in the data directory', () => {
    expect(readSnapshot(snapshotFile(pythonSnapshotDir({ dataDir })))).toBeInstanceOf(Uint8Array);
  });

  it('leave nothing of the snapshot in reach: no compiled prelude in __main__, the js modules gone', async () => {
    const r = await py.run(
      [
        'import sys',
        "main = sys.modules.get('__main__')",
        "result = [main is not None and hasattr(main, '_cem_prelude_code'), 'js' in sys.modules, 'pyodide_js' in sys.modules]",
      ].join('\n'),
    );
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual([false, false, false]);
  });

  it('keep one agent state from the next agent (module attributes, builtins, the time module)', async () => {
    // Whatever of this the sandbox allows within a call, none of it may outlive the call.
    const a = await py.run(
      ['import json, time, builtins', 'for target, name, value in ((json, "LEAK", "a"), (builtins, "LEAK", "a"), (time, "sleep", lambda s: "a")):', '    try:', '        setattr(target, name, value)', '    except Exception:', '        pass', 'result = "done"'].join('\n'),
      { namespace: 'agent-a' },
    );
    expect(a.result).toBe('done');
    const b = await py.run(
      ['import json, time, builtins', "result = [getattr(json, 'LEAK', None), getattr(builtins, 'LEAK', None), time.sleep(0)]"].join('\n'),
      { namespace: 'agent-b' },
    );
    expect(b.error).toBeUndefined();
    expect(b.result).toEqual([null, null, null]);
  });

  it('take a long context_vars (it crosses as UTF-8 bytes) intact, non-ASCII text included', async () => {
    const rows = Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `Zoë ${i} — 東京 🚀`, score: i % 7 }));
    const r = await py.run("result = [len(rows), rows[2999]['name'], sum(r['score'] for r in rows), note]", { contextVars: { rows, note: 'ça va' }, namespace: 'agent-b' });
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual([3_000, 'Zoë 2999 — 東京 🚀', rows.reduce((a, x) => a + x.score, 0), 'ça va']);
  });

  it('refuse the same things as a cold interpreter (audit hook in place)', async () => {
    const r = await py.run("import os\nos.system('true')", { namespace: 'agent-b' });
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('PermissionError');
  });

  it('kept no stale time.sleep in the modules loaded before the prelude replaced it', async () => {
    const r = await py.run(
      ['import sys, time', 'hits = []', 'for name, mod in list(sys.modules.items()):', '    d = getattr(mod, "__dict__", {})', '    hits += [name + "." + k for k, v in list(d.items()) if getattr(v, "__name__", "") == "sleep" and v is not time.sleep and callable(v) and getattr(v, "__module__", "") == "time"]', 'result = hits'].join('\n'),
      { namespace: 'agent-c' },
    );
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual([]);
  });
});
