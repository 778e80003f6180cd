// Skill store figures of issue 5: compileSkill served from the content-hash cache (warm) against
// a compile per call (cold, the same-run baseline), atomic save cost, start-up over many skills,
// and the delay from a hand edit on disk to the store serving it. The in-sandbox import_skill
// figure is measured by the executor section.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BenchRow, BenchSection } from './bench-types.js';
import { percentile, round, summary } from './stats.js';
import { SkillStore } from '../src/skills/index.js';
import { silentLogger } from '../src/util/logger.js';

const GROUP = 'skills';
const WARM_CALLS = 20_000;
const COLD_CALLS = 1_000;
const TS_COLD_CALLS = 300;
const SAVES = 60;
const START_SKILLS = 500;
const RELOAD_ROUNDS = 15;
const RELOAD_TARGET_MS = 1_000;

/** A realistic skill: doc comments, four functions, an import of another skill; `variant` changes its hash. */
function jsSkill(variant: number): string {
  return `// variant ${variant}
import { normalize } from 'skill:text_utils';

/**
 * Keep the items at or above a risk threshold.
 * @param items rows with a numeric risk_score
 * @param threshold minimum score kept (default 7)
 */
export function filter_high_risk(items, threshold = 7) {
  return items.filter((item) => item.risk_score >= threshold);
}

/** Group rows by a field, counting each group. */
export function count_by(items, field) {
  const counts = {};
  for (const item of items) {
    const key = normalize(String(item[field] ?? 'unknown'));
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Top n rows by a numeric field, highest first. */
export function top_n(items, field, n = 10) {
  return [...items].sort((a, b) => (b[field] ?? 0) - (a[field] ?? 0)).slice(0, n);
}

/** A short summary fit to return to a model. */
export async function summarize_risk(items) {
  const risky = filter_high_risk(items);
  return {
    total: items.length,
    risky: risky.length,
    by_region: count_by(risky, 'region'),
    worst: top_n(risky, 'risk_score', 3).map((r) => r.id),
  };
}
`;
}

function tsSkill(variant: number): string {
  return `// variant ${variant}
export interface Row { id: string; amount: number; currency: 'USD' | 'EUR'; tags?: string[] }
type Totals = Record<Row['currency'], number>;

/** Sum amounts per currency. */
export function totals(rows: readonly Row[]): Totals {
  const out: Totals = { USD: 0, EUR: 0 };
  for (const row of rows) out[row.currency] += row.amount;
  return out;
}

/** Rows carrying a tag. */
export const tagged = (rows: readonly Row[], tag: string): Row[] => rows.filter((r) => r.tags?.includes(tag) ?? false);

export default class Ledger<T extends Row = Row> {
  #rows: T[] = [];
  add(row: T): this {
    this.#rows.push(row);
    return this;
  }
  get size(): number {
    return this.#rows.length;
  }
}
`;
}

async function time(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    latencies.push(performance.now() - t);
  }
  return latencies;
}

export const skillsBench: BenchSection = {
  group: GROUP,
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = await mkdtemp(path.join(os.tmpdir(), 'skills-bench-'));
    const stores: SkillStore[] = [];
    const open = async (dir: string, cacheSize?: number): Promise<SkillStore> => {
      const store = new SkillStore({ dir: path.join(root, dir), logger: silentLogger(), ...(cacheSize !== undefined && { cacheSize }) });
      stores.push(store);
      await store.start();
      return store;
    };
    try {
      const store = await open('main');
      await store.save({ name: 'text_utils', code: 'export const normalize = (s) => s.trim().toLowerCase();\n' });
      await store.save({ name: 'risk', code: jsSkill(0) });
      await store.save({ name: 'risk_b', code: jsSkill(1) });
      await store.save({ name: 'ledger', code: tsSkill(0), language: 'typescript' });
      await store.save({ name: 'ledger_b', code: tsSkill(1), language: 'typescript' });

      // Let the watchers' reloads of those saves finish, so they do not run inside the timings.
      await new Promise((resolve) => setTimeout(resolve, 600));

      progress('skills: compileSkill cold (every call a cache miss)');
      // cacheSize 1 and two skills taken in turn: each call parses and rewrites the module.
      const cold = await open('main', 1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      await time(50, (i) => cold.compileSkill(i % 2 === 0 ? 'risk' : 'risk_b')); // warm up the JIT
      const coldJs = await time(COLD_CALLS, (i) => cold.compileSkill(i % 2 === 0 ? 'risk' : 'risk_b'));
      const coldName = 'compileSkill cold (cache miss), 50-line JS skill';
      rows.push({ group: GROUP, name: coldName, value: round(percentile(coldJs, 50), 4), unit: 'ms', extra: summary(coldJs) });
      await time(20, (i) => cold.compileSkill(i % 2 === 0 ? 'ledger' : 'ledger_b'));
      const coldTs = await time(TS_COLD_CALLS, (i) => cold.compileSkill(i % 2 === 0 ? 'ledger' : 'ledger_b'));
      rows.push({ group: GROUP, name: 'compileSkill cold (cache miss), 30-line TS skill', value: round(percentile(coldTs, 50), 4), unit: 'ms', extra: summary(coldTs) });

      progress('skills: compileSkill warm (content-hash cache)');
      await time(1_000, () => store.compileSkill('risk'));
      const warm = await time(WARM_CALLS, () => store.compileSkill('risk'));
      rows.push({
        group: GROUP,
        name: 'compileSkill warm (cache hit), 50-line JS skill',
        value: round(percentile(warm, 50), 4),
        unit: 'ms',
        extra: summary(warm),
        baseline: { name: coldName, ratio: round(percentile(warm, 50) / Math.max(percentile(coldJs, 50), 1e-6), 4) },
      });

      progress('skills: atomic save (temp folder, fsync, rename)');
      const saves = await time(SAVES, (i) => store.save({ name: 'saved', code: jsSkill(100 + i) }));
      rows.push({ group: GROUP, name: 'save, atomic with fsync (50-line JS skill)', value: round(percentile(saves, 50), 2), unit: 'ms', extra: summary(saves) });

      progress(`skills: start over ${START_SKILLS} skills`);
      const many = new SkillStore({ dir: path.join(root, 'many'), logger: silentLogger() });
      for (let i = 0; i < START_SKILLS; i++) await many.save({ name: `skill_${i}`, code: jsSkill(1_000 + i).replace(/^import .*$/m, '') });
      await many.close();
      const started = performance.now();
      const manyStarted = await open('many');
      const startMs = performance.now() - started;
      rows.push({ group: GROUP, name: `start: scan, parse and watch ${START_SKILLS} skills`, value: round(startMs, 1), unit: 'ms', extra: { skills: manyStarted.stats().count } });

      progress('skills: reload delay after a hand edit on disk');
      const delays: number[] = [];
      for (let i = 0; i < RELOAD_ROUNDS; i++) {
        const code = `export const probe = ${i};\n`;
        const seen = new Promise<void>((resolve) => {
          const off = store.onChange((change) => {
            if (change.name !== 'probe' || change.source !== 'disk') return;
            void store.load('probe').then((loaded) => {
              if (loaded.code === code) {
                off();
                resolve();
              }
            }, () => undefined);
          });
        });
        if (i === 0) await store.save({ name: 'probe', code: 'export const probe = -1;\n' });
        const written = performance.now();
        await writeFile(path.join(root, 'main', 'probe', 'index.js'), code);
        const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hand edit not picked up after 10 s')), 10_000).unref());
        await Promise.race([seen, timeout]);
        delays.push(performance.now() - written);
        await new Promise((resolve) => setTimeout(resolve, 400)); // let the confirming reload pass between rounds
      }
      const worst = Math.max(...delays);
      rows.push({
        group: GROUP,
        name: 'hot reload, hand edit written to served',
        value: round(percentile(delays, 50), 1),
        unit: 'ms',
        extra: { p99_ms: round(percentile(delays, 99), 1), max_ms: round(worst, 1), rounds: delays.length },
        target: `< ${RELOAD_TARGET_MS} ms`,
        met: worst < RELOAD_TARGET_MS,
      });
      return rows;
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await rm(root, { recursive: true, force: true });
    }
  },
};
