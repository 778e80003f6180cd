// `npm run bench [-- SECTION ...]`: runs the benchmark sections, prints one table, writes
// bench/results/latest.json and a bar chart (bench/results/chart.svg) of the throughput rows.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow, BenchSection } from './bench-types.js';

/** Section name -> [module file, export name]. */
const SECTION_FILES: Record<string, [string, string]> = {
  executor: ['./executor-bench.js', 'executorBench'],
  mcp: ['./mcp-bench.js', 'mcpBench'],
  catalog: ['./catalog-bench.js', 'catalogBench'],
  skills: ['./skills-bench.js', 'skillsBench'],
  pii: ['./pii-bench.js', 'piiBench'],
  python: ['./python-bench.js', 'pythonBench'],
  'python-light': ['./python-light-bench.js', 'pythonLightBench'],
  integration: ['./integration-bench.js', 'integrationBench'],
  search: ['./search-bench.js', 'searchBench'],
  tokens: ['./token-bench.js', 'tokenBench'],
  cluster: ['./cluster-bench.js', 'clusterBench'],
  startup: ['./startup-bench.js', 'startupBench'],
  contain: ['./contain-bench.js', 'containBench'],
};
const SECTIONS: Record<string, () => Promise<BenchSection>> = Object.fromEntries(
  Object.entries(SECTION_FILES).map(([name, [file, exported]]) => [
    name,
    async () => ((await import(file)) as Record<string, BenchSection>)[exported] as BenchSection,
  ]),
);

const here = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.resolve(here, '..', '..', 'bench', 'results');

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !(w in SECTIONS));
  if (unknown.length > 0) {
    process.stderr.write(`unknown section(s): ${unknown.join(', ')}; choose from ${Object.keys(SECTIONS).join(', ')}\n`);
    process.exit(2);
  }
  const names = wanted.length > 0 ? wanted : Object.keys(SECTIONS);
  const rows: BenchRow[] = [];
  const started = Date.now();
  for (const name of names) {
    const section = await (SECTIONS[name] as () => Promise<BenchSection>)();
    const t = performance.now();
    process.stderr.write(`\n== ${name}\n`);
    const got = await section.run((m) => process.stderr.write(`  [${((performance.now() - t) / 1000).toFixed(1)}s] ${m}\n`));
    rows.push(...got);
  }
  printTable(rows);
  mkdirSync(resultsDir, { recursive: true });
  const report = {
    date: new Date(started).toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Math.round(totalmem() / 2 ** 30),
    duration_s: Math.round((Date.now() - started) / 1000),
    rows,
  };
  const json = path.join(resultsDir, 'latest.json');
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  const svg = path.join(resultsDir, 'chart.svg');
  writeFileSync(svg, chart(rows));
  process.stdout.write(`\nwrote ${path.relative(process.cwd(), json)} and ${path.relative(process.cwd(), svg)}\n`);
  const missed = rows.filter((r) => r.met === false);
  if (missed.length > 0) process.stdout.write(`targets missed: ${missed.map((r) => `${r.group}/${r.name}`).join('; ')}\n`);
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : String(v);
}

function printTable(rows: readonly BenchRow[]): void {
  const lines = rows.map((r) => {
    const extra = r.extra ? Object.entries(r.extra).map(([k, v]) => `${k}=${fmt(v)}`).join(' ') : '';
    const target = r.target ? `${r.target} ${r.met === undefined ? '' : r.met ? 'MET' : 'MISSED'}` : '';
    const base = r.baseline ? `${r.baseline.ratio}x ${r.baseline.name}` : '';
    return [r.group, r.name, `${fmt(r.value)} ${r.unit}`, extra, target, base];
  });
  const header = ['group', 'measure', 'value', 'detail', 'target', 'vs baseline'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ');
  process.stdout.write(`\n${row(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n`);
  for (const l of lines) process.stdout.write(`${row(l)}\n`);
}

/** A horizontal bar chart of every throughput row (calls/s, MB/s), log-free and dependency-free. */
function chart(rows: readonly BenchRow[]): string {
  const bars = rows.filter((r) => r.unit === 'calls/s' || r.unit === 'MB/s');
  const width = 980;
  const barH = 22;
  const left = 430;
  const top = 40;
  const height = top + bars.length * (barH + 6) + 30;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const items = bars
    .map((b, i) => {
      const y = top + i * (barH + 6);
      const w = Math.max(1, ((width - left - 120) * b.value) / max);
      const color = b.name.startsWith('baseline') ? '#9aa5b1' : b.met === false ? '#d64545' : '#2f80ed';
      return `<text x="${left - 8}" y="${y + 15}" text-anchor="end" font-size="12">${esc(`${b.group}: ${b.name}`)}</text>` +
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}"/>` +
        `<text x="${left + w + 6}" y="${y + 15}" font-size="12">${esc(`${fmt(b.value)} ${b.unit}`)}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="24" font-size="16" font-weight="bold">code-execution-mcp benchmark: throughput (grey = same-run baseline, red = target missed)</text>
${items}
</svg>
`;
}

main().catch((err: unknown) => {
  process.stderr.write(`benchmark failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
