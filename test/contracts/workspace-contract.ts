// The contract of workspace storage (src/workspace/workspace-store.ts), written once and run
// against the folder workspace (with its embedded and its Redis quota count) and the in-memory one
// (memory-workspace.ts, no folder at all). What the tools and the sandbox rely on: confinement to
// a namespace, one namespace never seeing another's files, whole-file writes under concurrency,
// strict quotas with messages that name the limit, and refusals with the daemon's error codes.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../src/workspace/index.js';
import type { WorkspaceStore } from '../../src/workspace/index.js';

export interface WorkspaceLimits {
  maxFileBytes: number;
  quotaBytes: number;
  quotaFiles: number;
}

export interface WorkspaceHarness {
  /** A fresh, empty store with these limits. */
  store(limits: WorkspaceLimits): Promise<WorkspaceStore>;
}

const LIMITS: WorkspaceLimits = { maxFileBytes: 1024, quotaBytes: 1_000_000, quotaFiles: 1000 };

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return error as WorkspaceError;
}

export function describeWorkspaceContract(name: string, harness: WorkspaceHarness): void {
  describe(`workspace contract: ${name}`, () => {
    it('writes, reads, lists (sorted, below a subpath) and deletes, keeping its usage', async () => {
      const store = await harness.store(LIMITS);
      const ns = store.namespace('agent-a');
      expect(await ns.writeFile('b.txt', 'bee')).toEqual({ bytes: 3 });
      await ns.writeFile('./a/z.json', '{"z":1}');
      await ns.writeFile('a/b/c.txt', 'héllo');
      expect(await ns.readFile('b.txt')).toEqual({ content: 'bee', size: 3 });
      expect(await ns.readFile('a/b/../b/c.txt')).toEqual({ content: 'héllo', size: 6 });
      expect(await ns.listFiles()).toEqual(['a/b/c.txt', 'a/z.json', 'b.txt']);
      expect(await ns.listFiles('a/b')).toEqual(['a/b/c.txt']);
      expect(await ns.listFiles('b.txt')).toEqual(['b.txt']);
      expect(await ns.usage()).toMatchObject({ bytes: 16, files: 3, quota_bytes: LIMITS.quotaBytes, quota_files: LIMITS.quotaFiles });
      await ns.writeFile('b.txt', 'bumblebee');
      expect((await ns.usage()).bytes).toBe(22);
      await ns.deleteFile('b.txt');
      expect(await ns.usage()).toMatchObject({ bytes: 13, files: 2 });
      expect((await refusal(ns.readFile('b.txt'))).code).toBe('NOT_FOUND');
      expect((await refusal(ns.deleteFile('b.txt'))).code).toBe('NOT_FOUND');
      expect((await refusal(ns.listFiles('nope'))).code).toBe('NOT_FOUND');
      expect(await ns.stats()).toEqual({ path: 'agent-a', file_count: 2, total_bytes: 13 });
      store.close();
    });

    it("keeps namespaces apart: another agent's files are neither listed, read, counted nor reachable by a climb", async () => {
      const store = await harness.store(LIMITS);
      const a = store.namespace('agent-a');
      const b = store.namespace('agent-b');
      await a.writeFile('secret.txt', 'alice only');
      expect(await b.listFiles()).toEqual([]);
      expect((await refusal(b.readFile('secret.txt'))).code).toBe('NOT_FOUND');
      for (const climb of ['../agent-a/secret.txt', '/agent-a/secret.txt', 'x/../../agent-a/secret.txt']) {
        const error = await refusal(b.readFile(climb));
        expect(error.code, climb).toBe('PATH_OUTSIDE');
        expect(error.message).not.toContain('alice only');
      }
      expect((await refusal(b.writeFile('../agent-a/secret.txt', 'overwritten'))).code).toBe('PATH_OUTSIDE');
      expect((await refusal(b.deleteFile('../agent-a/secret.txt'))).code).toBe('PATH_OUTSIDE');
      expect(await b.usage()).toMatchObject({ bytes: 0, files: 0 });
      expect((await a.readFile('secret.txt')).content).toBe('alice only');
      store.close();
    });

    it('refuses bad input with the code and a message naming the limit or the fix', async () => {
      const store = await harness.store(LIMITS);
      const ns = store.namespace('agent-a');
      const notString = await refusal(ns.writeFile('x.json', { a: 1 }));
      expect(notString.message).toMatch(/content must be a string.*JSON\.stringify/);
      const big = await refusal(ns.writeFile('big.txt', 'x'.repeat(LIMITS.maxFileBytes + 1)));
      expect(big.code).toBe('TOO_LARGE');
      expect(big.message).toContain(`${LIMITS.maxFileBytes}-byte file limit`);
      for (const bad of ['', '.', 42, null, 'a\u0000b', `${'n'.repeat(256)}.txt`]) {
        expect((await refusal(ns.writeFile(bad, 'x'))).code, String(bad)).toBe('PATH_INVALID');
      }
      await ns.writeFile('dir/file.txt', 'x');
      expect((await refusal(ns.readFile('dir'))).code).toBe('IS_DIRECTORY');
      expect((await refusal(ns.writeFile('dir', 'x'))).code).toBe('IS_DIRECTORY');
      expect((await refusal(ns.writeFile('dir/file.txt/below.txt', 'x'))).code).toBe('NOT_A_FILE');
      expect(await ns.listFiles()).toEqual(['dir/file.txt']);
      store.close();
    });

    it('holds its quotas strictly under concurrent writers, naming the option to raise', async () => {
      const store = await harness.store({ maxFileBytes: 1024, quotaBytes: 1000, quotaFiles: 5 });
      const ns = store.namespace('agent-q');
      const files = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => ns.writeFile(`f${i}.txt`, 'x')));
      expect(files.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      const refused = files.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect((refused?.reason as WorkspaceError).code).toBe('QUOTA_EXCEEDED');
      expect((refused?.reason as Error).message).toContain('limits.workspaceQuotaFiles');
      await Promise.all(files.flatMap((r, i) => (r.status === 'fulfilled' ? [ns.deleteFile(`f${i}.txt`)] : [])));
      const bytes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => ns.writeFile(`g${i}.txt`, 'y'.repeat(300))));
      expect(bytes.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      const over = bytes.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect((over?.reason as Error).message).toContain('limits.workspaceQuotaBytes');
      expect(await ns.usage()).toMatchObject({ bytes: 900, files: 3 });
      store.close();
    });

    it('two writers of one file: the reader sees one whole version, and the usage counts the last', async () => {
      const store = await harness.store(LIMITS);
      const ns = store.namespace('agent-a');
      const versions = Array.from({ length: 16 }, (_, i) => String.fromCharCode(97 + i).repeat(10 + i * 7));
      const reads: string[] = [];
      await Promise.all([
        ...versions.map((v) => ns.writeFile('same.txt', v)),
        ...versions.map(() => ns.readFile('same.txt').then((r) => void reads.push(r.content), () => undefined)),
      ]);
      for (const r of reads) expect(versions).toContain(r);
      const final = (await ns.readFile('same.txt')).content;
      expect(versions).toContain(final);
      expect(await ns.usage()).toMatchObject({ bytes: Buffer.byteLength(final), files: 1 });
      store.close();
    });

    it('a local folder, when offered, holds the namespace files; without one the interface is the whole story', async () => {
      const store = await harness.store(LIMITS);
      const ns = store.namespace('agent-a');
      await ns.writeFile('here.txt', 'in the folder');
      if (ns.localFolder === undefined) {
        expect((await ns.readFile('here.txt')).content).toBe('in the folder');
        return;
      }
      const root = await ns.localFolder.root();
      expect(await readFile(path.join(root, 'here.txt'), 'utf8')).toBe('in the folder');
      expect(await store.namespace('agent-b').localFolder?.root()).not.toBe(root);
      store.close();
    });
  });
}
