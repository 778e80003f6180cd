// Reads the Prometheus text format (version 0.0.4) that GET /metrics answers, for the `status`
// command: samples by metric name, each with its labels. Comments, HELP and TYPE lines are skipped.

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

function toNumber(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

export function parsePrometheus(text: string): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const m of labelText.matchAll(LABEL)) labels[m[1] ?? ''] = unescape(m[2] ?? '');
    const samples = out.get(name) ?? [];
    samples.push({ labels, value: toNumber(value) });
    out.set(name, samples);
  }
  return out;
}

/** The samples of `name` (none when absent). */
export function samples(metrics: ReadonlyMap<string, Sample[]>, name: string): Sample[] {
  return metrics.get(name) ?? [];
}

/** The value of the sample of `name` whose labels include `labels`, or undefined. */
export function valueOf(metrics: ReadonlyMap<string, Sample[]>, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(metrics, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
