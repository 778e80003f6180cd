// PII tokenization throughput: a 10 MB mixed document, 100,000 short records, and the cost of
// pii.auto on a typical execute_code result. Inputs are generated from a fixed seed so runs compare.

import { loadavg } from 'node:os';
import type { BenchRow, BenchSection } from './bench-types.js';
import { PiiVaultStore } from '../src/pii/index.js';
import type { VaultOwner } from '../src/pii/index.js';
import { percentile, round, prng } from './stats.js';

const DOCUMENT_BYTES = 10 * 1024 * 1024;
const RECORD_COUNT = 100_000;
const RESULT_RUNS = 200;
/** Timed runs per throughput figure; the best is reported. */
const RUNS = 3;
const TARGET_MB_PER_S = 20;
const TARGET = `>= ${TARGET_MB_PER_S} MB/s`;
const MB = 1024 * 1024;
const OWNER: VaultOwner = { sessionId: 'bench', agent: 'bench' };
/** A fresh vault the size of the inputs (the per-agent byte budget would refuse 100,000 records' worth by default). */
const newVault = (): PiiVaultStore => new PiiVaultStore({ maxBytesPerAgent: 1024 * MB });


const WORDS = (
  'the order was shipped to customer after payment review and the invoice total includes tax ' +
  'service request status pending approved closed escalated account region team meeting notes ' +
  'version build release deploy server latency error retry timeout queue worker report summary'
).split(' ');

/** Values that vary per occurrence, so the vault mints many tokens as it would on real data. */
const VARYING_PII: readonly ((rand: () => number) => string)[] = [
  (rand) => `customer${Math.floor(rand() * 1e6)}@example.com`,
  (rand) => `(415) 555-${String(Math.floor(rand() * 1e4)).padStart(4, '0')}`,
  (rand) => `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${1 + Math.floor(rand() * 254)}`,
  (rand) => `${100 + Math.floor(rand() * 565)}-${10 + Math.floor(rand() * 90)}-${1000 + Math.floor(rand() * 9000)}`,
];
/** Values with checksums or fixed formats, drawn from a pool. */
const PII_SAMPLES = [
  'ops+alerts@mail.example.org', '+44 20 7946 0958', '4111 1111 1111 1111', '5555-5555-5555-4444',
  '378282246310005', '2001:db8::42', 'GB82 WEST 1234 5698 7654 32', 'DE89370400440532013000',
  'AKIAIOSFODNN7EXAMPLE', 'password=Tr0ub4dor&3', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
];

function piiValue(rand: () => number): string {
  return rand() < 0.6 ? pick(rand, VARYING_PII)(rand) : pick(rand, PII_SAMPLES);
}

/** Look-alikes the detectors must reject, so the bench pays for validation too. */
const DECOYS = [
  '2024-01-15 10:30:00', 'v1.2.3.4', 'order #10023945', '$1,234.56', '4111 1111 1111 1112',
  '123e4567-e89b-12d3-a456-426614174000', 'commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b', '1705314600',
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

/** Log and prose lines; about one line in three carries PII, one in four a decoy. */
function mixedDocument(bytes: number): string {
  const rand = prng(6);
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const words: string[] = [];
    const n = 8 + Math.floor(rand() * 12);
    for (let i = 0; i < n; i++) words.push(pick(rand, WORDS));
    const r = rand();
    if (r < 0.33) words.splice(Math.floor(rand() * words.length), 0, piiValue(rand));
    else if (r < 0.58) words.splice(Math.floor(rand() * words.length), 0, pick(rand, DECOYS));
    const line = `2024-03-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')} INFO ${words.join(' ')}.`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** Records like rows of a customer list: a name, a status, and maybe one PII value. */
function shortRecords(count: number): string[] {
  const rand = prng(7);
  const records: string[] = [];
  for (let i = 0; i < count; i++) {
    const value = rand() < 0.5 ? piiValue(rand) : pick(rand, DECOYS);
    records.push(`id=${i} name=Customer ${i} status=${pick(rand, WORDS)} ${value}`);
  }
  return records;
}

/** A typical execute_code result: 100 customer rows as JSON plus a few output lines. */
function typicalResult(): { result: unknown; output: string[] } {
  const rand = prng(8);
  const rows = Array.from({ length: 100 }, (_, i) => ({
    id: i,
    name: `Customer ${i}`,
    email: `customer${i}@example.com`,
    phone: `(415) 555-${String(1000 + i).padStart(4, '0')}`,
    status: pick(rand, WORDS),
    total: Math.round(rand() * 100_000) / 100,
  }));
  return { result: { count: rows.length, rows }, output: ['loaded 100 rows', 'filtered by status'] };
}

function mbPerSecond(chars: number, ms: number): number {
  return chars / MB / (ms / 1000);
}

/** Wall and CPU milliseconds of one call. */
async function timed(fn: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wallMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * The best of a few runs: on a shared machine the slowest runs measure the neighbours, the
 * fastest the code. CPU time and the load average are reported beside wall time for the same
 * reason; `met` is judged on wall time all the same.
 */
async function bestOf(runs: number, fn: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  let best = { wallMs: Infinity, cpuMs: Infinity };
  for (let i = 0; i < runs; i++) {
    const r = await timed(fn);
    if (r.wallMs < best.wallMs) best = r;
  }
  return best;
}

export const piiBench: BenchSection = {
  group: 'pii',
  async run(progress) {
    const rows: BenchRow[] = [];

    progress('pii: generating a 10 MB mixed document');
    const doc = mixedDocument(DOCUMENT_BYTES);
    // Warm-up on a slice so the regexes are compiled and the JIT has seen the code.
    await newVault().tokenize(OWNER, doc.slice(0, MB));

    progress('pii: baseline, one regex pass over the document');
    let hits = 0;
    const baseline = await bestOf(RUNS, async () => {
      hits = 0;
      for (const _ of doc.matchAll(/[@:=]/g)) hits++;
    });
    const baselineRate = mbPerSecond(doc.length, baseline.wallMs);
    const baselineName = 'baseline: one /[@:=]/g pass, 10 MB document';
    rows.push({ group: 'pii', name: baselineName, value: round(baselineRate, 1), unit: 'MB/s', extra: { hits } });

    progress(`pii: tokenizing the 10 MB document (best of ${RUNS})`);
    let distinct = 0;
    const docTime = await bestOf(RUNS, async () => {
      distinct = (await newVault().tokenize(OWNER, doc)).found;
    });
    const docRate = mbPerSecond(doc.length, docTime.wallMs);
    rows.push({
      group: 'pii',
      name: 'tokenize 10 MB mixed document',
      value: round(docRate, 1),
      unit: 'MB/s',
      extra: {
        ms: round(docTime.wallMs, 1),
        cpu_mb_per_s: round(mbPerSecond(doc.length, docTime.cpuMs), 1),
        distinct_values: distinct,
        load_1m: round(loadavg()[0] ?? 0, 1),
      },
      target: TARGET,
      met: docRate >= TARGET_MB_PER_S,
      baseline: { name: baselineName, ratio: round(docRate / baselineRate, 3) },
    });

    progress(`pii: tokenizing 100,000 short records (best of ${RUNS})`);
    const records = shortRecords(RECORD_COUNT);
    const recordChars = records.reduce((sum, r) => sum + r.length, 0);
    // One untimed pass: the short-text path is a different code path from the document's.
    const warmVault = newVault();
    for (const record of records) await warmVault.tokenize(OWNER, record);
    let found = 0;
    const recordTime = await bestOf(RUNS, async () => {
      const vault = newVault();
      found = 0;
      for (const record of records) found += (await vault.tokenize(OWNER, record)).found;
    });
    const recordRate = mbPerSecond(recordChars, recordTime.wallMs);
    rows.push({
      group: 'pii',
      name: '100,000 short records, one call each',
      value: round(recordRate, 1),
      unit: 'MB/s',
      extra: {
        ms: round(recordTime.wallMs, 1),
        cpu_mb_per_s: round(mbPerSecond(recordChars, recordTime.cpuMs), 1),
        records_per_s: Math.round(RECORD_COUNT / (recordTime.wallMs / 1000)),
        values: found,
        load_1m: round(loadavg()[0] ?? 0, 1),
      },
      target: TARGET,
      met: recordRate >= TARGET_MB_PER_S,
    });

    progress('pii: pii.auto cost on a typical execute_code result');
    const result = typicalResult();
    const resultVault = newVault();
    const times: number[] = [];
    for (let i = 0; i < RESULT_RUNS; i++) times.push((await timed(() => resultVault.tokenizeValue(OWNER, result))).wallMs);
    rows.push({
      group: 'pii',
      name: 'pii.auto on a 100-row execute_code result',
      value: round(percentile(times, 50), 3),
      unit: 'ms',
      extra: { p95: round(percentile(times, 95), 3), p99: round(percentile(times, 99), 3), json_chars: JSON.stringify(result).length },
    });
    return rows;
  },
};
