// Workspace writes are atomic and bounded: concurrent writers and readers of one file never see a
// mix of versions, quota refusals name the limit to raise, spill files are pruned and expired,
// and crash debris (temporary files) is swept by age.

import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/util/atomic-write.js';
import { Workspace, WorkspaceError } from '../../src/workspace/index.js';
import { tempDir } from '../fixtures/config.js';

const workspaces: Workspace[] = [];
afterEach(() => {
  for (const w of workspaces.splice(0)) w.close();
});

function workspace(options: Partial<ConstructorParameters<typeof Workspace>[0]> = {}): Workspace {
  const w = new Workspace({ root: tempDir('cem-resilience-'), maxFileBytes: 8 * 1024 * 1024, ...options });
  workspaces.push(w);
  return w;
}

describe('concurrent writers and readers of one file', () => {
  it('every read and the final file hold one whole version', async () => {
    const view = workspace().namespace('agent');
    const SIZE = 512 * 1024;
    const versions = ['a', 'b', 'c', 'd'].map((ch) => ch.repeat(SIZE));
    await view.writeFile('shared.txt', versions[0]);
    const torn: string[] = [];
    let writing = true;
    const readers = Array.from({ length: 3 }, async () => {
      let reads = 0;
      while (writing || reads === 0) {
        const { content } = await view.readFile('shared.txt');
        reads++;
        if (content.length !== SIZE || content !== content[0]!.repeat(SIZE)) torn.push(`${content.length} chars starting ${content.slice(0, 8)}`);
      }
      return reads;
    });
    const writers = versions.map(async (v) => {
      for (let i = 0; i < 15; i++) await view.writeFile('shared.txt', v);
    });
    await Promise.all(writers);
    writing = false;
    const reads = await Promise.all(readers);
    expect(torn).toEqual([]);
    expect(reads.every((n) => n > 0)).toBe(true);
    const final = await view.readFile('shared.txt');
    expect(versions).toContain(final.content);
    // No temporary file is left behind or listed.
    expect(await view.listFiles()).toEqual(['shared.txt']);
    expect((await readdir(view.root)).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([]);
  }, 60_000);
});

describe('workspace quota', () => {
  it('refuses a write past the byte quota with a message naming limits.workspaceQuotaBytes, and counts deletes', async () => {
    const view = workspace({ quotaBytes: 10_000 }).namespace('agent');
    await view.writeFile('a.txt', 'x'.repeat(6000));
    const refused = await view.writeFile('b.txt', 'x'.repeat(6000)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkspaceError);
    expect((refused as WorkspaceError).code).toBe('QUOTA_EXCEEDED');
    expect((refused as Error).message).toMatch(/^workspace quota exceeded: .*limits\.workspaceQuotaBytes/);
    expect(await view.listFiles()).toEqual(['a.txt']);
    // Replacing a file counts only the difference; deleting gives the room back.
    await view.writeFile('a.txt', 'y'.repeat(9000));
    await view.deleteFile('a.txt');
    await view.writeFile('b.txt', 'x'.repeat(9000));
    expect(await view.listFiles()).toEqual(['b.txt']);
  });

  it('refuses new files past the file quota, and another namespace is not affected', async () => {
    const ws = workspace({ quotaFiles: 3 });
    const view = ws.namespace('mallory');
    for (let i = 0; i < 3; i++) await view.writeFile(`f${i}.txt`, 'x');
    await expect(view.writeFile('f3.txt', 'x')).rejects.toThrow(/workspace quota exceeded: namespace "mallory" already holds 3 files, the limit is 3; .*limits\.workspaceQuotaFiles/);
    await view.writeFile('f0.txt', 'replacing an existing file is fine');
    await ws.namespace('alice').writeFile('mine.txt', 'alice is not affected');
  });

  it('never lets concurrent first writes to a namespace pass its quota together', async () => {
    // They all waited for the same first measure; each must then see the others' admissions,
    // and the measure a refusal triggers must not forget writes still on their way to disk.
    const view = workspace({ quotaBytes: 10_500 }).namespace('agent');
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => view.writeFile(`f${i}.txt`, 'x'.repeat(1000))));
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(10);
    expect((await view.listFiles()).length).toBeLessThanOrEqual(10);
    await view.writeFile('last.txt', 'x'.repeat(400));
  });

  it('counts files put there by hand once the measure is refreshed', async () => {
    const view = workspace({ quotaBytes: 5000 }).namespace('agent');
    await mkdir(view.root, { recursive: true });
    await writeFile(path.join(view.root, 'by-hand.bin'), Buffer.alloc(4000));
    await expect(view.writeFile('more.txt', 'x'.repeat(2000))).rejects.toThrow(/workspace quota exceeded/);
  });
});

describe('spill files and debris', () => {
  it('keeps only the newest spill files of a namespace', async () => {
    const view = workspace({ spillFilesKept: 2 }).namespace('agent');
    for (let i = 0; i < 5; i++) await view.writeFile(`outputs/execution-2026-01-0${i}.json`, `{"i":${i}}`);
    expect(await view.listFiles('outputs')).toEqual(['outputs/execution-2026-01-03.json', 'outputs/execution-2026-01-04.json']);
  });

  it('sweeps old temporary files and expired spill files, and leaves fresh ones', async () => {
    const ws = workspace({ spillMaxAgeMs: 3600_000 });
    const view = ws.namespace('agent');
    await view.writeFile('keep.txt', 'kept');
    await view.writeFile('outputs/execution-old.json', '{}');
    await view.writeFile('outputs/execution-new.json', '{}');
    const oldTemp = path.join(view.root, `${TEMP_PREFIX}keep.txt-dead`);
    const freshTemp = path.join(view.root, `${TEMP_PREFIX}keep.txt-live`);
    await writeFile(oldTemp, 'half a write');
    await writeFile(freshTemp, 'a write in progress');
    const dayAgo = new Date(Date.now() - 24 * 3600_000);
    await utimes(oldTemp, dayAgo, dayAgo);
    await utimes(path.join(view.root, 'outputs/execution-old.json'), dayAgo, dayAgo);
    expect(await ws.sweep()).toBe(2);
    expect((await readdir(view.root)).sort()).toEqual([`${TEMP_PREFIX}keep.txt-live`, 'keep.txt', 'outputs']);
    expect(await view.listFiles()).toEqual(['keep.txt', 'outputs/execution-new.json']);
    expect((await stat(freshTemp)).isFile()).toBe(true);
    expect(await readFile(path.join(view.root, 'keep.txt'), 'utf8')).toBe('kept');
  });
});
