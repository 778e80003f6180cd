// The load test's chart (bench/results/load-test.svg): the coordinator's resident memory over
// time, each phase shaded, with that phase's calls, failures and p50/p99 written beside it.

interface RssPoint {
  t_s: number;
  rss_mb: number;
  phase: string;
}

interface PhaseRow {
  phase: string;
  calls: number;
  failures: Record<string, number>;
  p50_ms: number;
  p99_ms: number;
}

const W = 760;
const H = 320;
const PAD = { left: 56, right: 16, top: 56, bottom: 36 };
const SHADES = ['#eef5ff', '#fff1ec', '#f2f8ee'];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function loadTestChart(rss: readonly RssPoint[], rows: readonly PhaseRow[], lost: number): string {
  if (rss.length === 0) return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"/>`;
  const tMax = Math.max(...rss.map((p) => p.t_s), 1);
  const mMax = Math.max(...rss.map((p) => p.rss_mb), 1) * 1.1;
  const x = (t: number): number => PAD.left + (t / tMax) * (W - PAD.left - PAD.right);
  const y = (m: number): number => H - PAD.bottom - (m / mMax) * (H - PAD.top - PAD.bottom);
  const parts: string[] = [];
  rows.forEach((row, i) => {
    const points = rss.filter((p) => p.phase === row.phase);
    if (points.length === 0) return;
    const from = x(Math.min(...points.map((p) => p.t_s)));
    const to = x(Math.max(...points.map((p) => p.t_s)));
    parts.push(`<rect x="${from}" y="${PAD.top}" width="${Math.max(1, to - from)}" height="${H - PAD.top - PAD.bottom}" fill="${SHADES[i % SHADES.length]}"/>`);
    const failures = Object.values(row.failures).reduce((a, b) => a + b, 0);
    parts.push(`<text x="${from + 4}" y="${PAD.top + 14}" font-size="11">${esc(row.phase)}: ${row.calls} calls, ${failures} failed</text>`);
    parts.push(`<text x="${from + 4}" y="${PAD.top + 28}" font-size="11">p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms</text>`);
  });
  const path = rss.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t_s).toFixed(1)},${y(p.rss_mb).toFixed(1)}`).join(' ');
  parts.push(`<path d="${path}" fill="none" stroke="#2563eb" stroke-width="2"/>`);
  for (const m of [0, mMax / 2, mMax]) parts.push(`<text x="${PAD.left - 6}" y="${y(m) + 4}" font-size="10" text-anchor="end">${Math.round(m)}</text>`);
  parts.push(`<text x="${PAD.left}" y="${H - 10}" font-size="10">0 s</text><text x="${W - PAD.right}" y="${H - 10}" font-size="10" text-anchor="end">${Math.round(tMax)} s</text>`);
  parts.push(`<text x="${PAD.left}" y="22" font-size="14" font-weight="bold">Load test: coordinator RSS (MB) over time; lost writes ${lost}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><rect width="${W}" height="${H}" fill="white"/>${parts.join('')}</svg>\n`;
}
