// The contract of workspace quota counting (src/workspace/quota.ts QuotaCounter), written once and
// run against the daemon's own count and the Redis one. What Workspace relies on: the count starts
// from the folder, an admitted change is counted at once so concurrent writers (on one daemon or
// two) never both pass the last free byte, a refusal names the option to raise, an unwritten
// change is undone, one file changes under one writer at a time, and namespaces count apart.

import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { QuotaCounter, QuotaLimits } from '../../src/workspace/quota.js';

export interface QuotaHarness {
  /** This daemon's counter of `namespace`, whose files are in `root`. */
  counter(namespace: string, root: string, limits: QuotaLimits): Promise<QuotaCounter>;
  /** Another daemon's counter of the same namespace (a shared count); absent when each daemon counts alone. */
  peer?(namespace: string, root: string, limits: QuotaLimits): Promise<QuotaCounter>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function describeQuotaContract(name: string, harness: QuotaHarness): void {
  describe(`quota contract: ${name}`, () => {
    const base = mkdtempSync(path.join(tmpdir(), 'quota-contract-'));
    let n = 0;
    /** A fresh namespace: its name (unique across runs, for a shared store) and folder. */
    const fresh = (): { ns: string; root: string } => {
      const ns = `ns-${process.pid}-${Date.now()}-${++n}`;
      const root = path.join(base, ns);
      mkdirSync(root, { recursive: true });
      return { ns, root };
    };
    afterAll(() => rmSync(base, { recursive: true, force: true }));

    it('starts from what the folder holds', async () => {
      const { ns, root } = fresh();
      writeFileSync(path.join(root, 'a.txt'), 'x'.repeat(10));
      mkdirSync(path.join(root, 'sub'));
      writeFileSync(path.join(root, 'sub', 'b.txt'), 'y'.repeat(20));
      const counter = await harness.counter(ns, root, { bytes: 1000, files: 10 });
      expect(await counter.usage()).toEqual({ bytes: 30, files: 2 });
    });

    it('counts an admitted change at once: concurrent writers never pass the limit together', async () => {
      const { ns, root } = fresh();
      const limits = { bytes: 100, files: 100 };
      const one = await harness.counter(ns, root, limits);
      const two = harness.peer ? await harness.peer(ns, root, limits) : one;
      const verdicts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).admit(30, 1, `"f${i}"`, ns)));
      expect(verdicts.filter((v) => v === undefined)).toHaveLength(3);
      const refusal = verdicts.find((v) => v !== undefined);
      expect(refusal).toContain('limits.workspaceQuotaBytes');
      expect(refusal).toContain(ns);
    });

    it('refuses files past the file limit naming its option; an unwritten change is given back', async () => {
      const { ns, root } = fresh();
      const counter = await harness.counter(ns, root, { bytes: 1000, files: 2 });
      expect(await counter.admit(1, 1, '"a"', ns)).toBeUndefined();
      expect(await counter.admit(1, 1, '"b"', ns)).toBeUndefined();
      expect(await counter.admit(1, 1, '"c"', ns)).toContain('limits.workspaceQuotaFiles');
      counter.settle(1, 1, false);
      expect(await counter.admit(1, 1, '"c"', ns)).toBeUndefined();
    });

    it('a written change stays counted and a delete frees it', async () => {
      const { ns, root } = fresh();
      const counter = await harness.counter(ns, root, { bytes: 100, files: 10 });
      expect(await counter.admit(80, 1, '"big"', ns)).toBeUndefined();
      writeFileSync(path.join(root, 'big'), 'z'.repeat(80));
      counter.settle(80, 1, true);
      expect(await counter.admit(30, 1, '"more"', ns)).toContain('limits.workspaceQuotaBytes');
      unlinkSync(path.join(root, 'big'));
      counter.apply(-80, -1);
      expect(await counter.admit(30, 1, '"more"', ns)).toBeUndefined();
      await expect.poll(async () => (await counter.usage()).bytes).toBe(30);
    });

    it('runs one change of a file at a time, across daemons for a shared count, and other files beside it', async () => {
      const { ns, root } = fresh();
      const limits = { bytes: 1000, files: 10 };
      const one = await harness.counter(ns, root, limits);
      const two = harness.peer ? await harness.peer(ns, root, limits) : one;
      let inside = 0;
      let most = 0;
      const change = async (): Promise<void> => {
        most = Math.max(most, ++inside);
        await sleep(20);
        inside--;
      };
      await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? one : two).exclusive('same.txt', change)));
      expect(most).toBe(1);
      most = 0;
      await Promise.all(['a.txt', 'b.txt', 'c.txt'].map((file) => one.exclusive(file, change)));
      expect(most).toBeGreaterThan(1);
    });

    it('counts namespaces apart', async () => {
      const a = fresh();
      const b = fresh();
      const full = await harness.counter(a.ns, a.root, { bytes: 10, files: 10 });
      const other = await harness.counter(b.ns, b.root, { bytes: 10, files: 10 });
      expect(await full.admit(10, 1, '"x"', a.ns)).toBeUndefined();
      expect(await full.admit(1, 1, '"y"', a.ns)).toBeDefined();
      expect(await other.admit(10, 1, '"x"', b.ns)).toBeUndefined();
    });
  });
}
