// Turning one raw option value (typed JSON from the file, or a string from the environment or a
// flag) into a checked value, with a message that names the option and says what is accepted.
import { editDistance as distance } from '../util/edit-distance.js';

import path from 'node:path';
import type { OptionSpec } from './options.js';

export type OptionValue = number | string | boolean | readonly string[];

/** Where a value came from, for messages: 'code-execution-mcp.json', 'CODE_EXEC_PORT', '--port'. */
export interface ValueSource {
  label: string;
  /** Folder that relative paths are resolved against. */
  baseDir: string;
}

export type Checked = { ok: true; value: OptionValue } | { ok: false; message: string };

/** What the option accepts, phrased for an error message. */
export function expectation(spec: OptionSpec): string {
  switch (spec.kind) {
    case 'int':
      return `an integer between ${spec.min ?? 0} and ${spec.max ?? Number.MAX_SAFE_INTEGER}`;
    case 'bool':
      return 'true or false';
    case 'list':
      return 'a list of non-empty strings (comma-separated in the environment and flags)';
    case 'path':
      return 'a folder path';
    case 'enum':
      return `one of ${(spec.values ?? []).join(', ')}`;
    case 'string':
      return 'a non-empty string';
  }
}

function fail(spec: OptionSpec, source: ValueSource, raw: unknown): Checked {
  const shown = spec.secret ? '<hidden>' : JSON.stringify(raw);
  const where = source.label === spec.key ? '' : ` (from ${source.label})`;
  return { ok: false, message: `${spec.key} must be ${expectation(spec)}; got ${shown}${where}` };
}

/** Check a value from the JSON file. */
export function checkJsonValue(spec: OptionSpec, raw: unknown, source: ValueSource): Checked {
  switch (spec.kind) {
    case 'int':
      return typeof raw === 'number' ? checkInt(spec, raw, source, raw) : fail(spec, source, raw);
    case 'bool':
      return typeof raw === 'boolean' ? { ok: true, value: raw } : fail(spec, source, raw);
    case 'list':
      if (Array.isArray(raw) && raw.every((v): v is string => typeof v === 'string' && v.trim() !== '')) {
        return { ok: true, value: raw.map((v) => v.trim()) };
      }
      return fail(spec, source, raw);
    default:
      return typeof raw === 'string' ? checkString(spec, raw, source) : fail(spec, source, raw);
  }
}

/** Check a value given as text (environment variable or flag). */
export function checkTextValue(spec: OptionSpec, raw: string, source: ValueSource): Checked {
  const text = raw.trim();
  switch (spec.kind) {
    case 'int':
      return /^-?\d+$/.test(text) ? checkInt(spec, Number(text), source, raw) : fail(spec, source, raw);
    case 'bool': {
      const lower = text.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(lower)) return { ok: true, value: true };
      if (['false', '0', 'no', 'off'].includes(lower)) return { ok: true, value: false };
      return fail(spec, source, raw);
    }
    case 'list':
      return { ok: true, value: text.split(',').map((v) => v.trim()).filter((v) => v !== '') };
    default:
      return checkString(spec, text, source);
  }
}

function checkInt(spec: OptionSpec, n: number, source: ValueSource, raw: unknown): Checked {
  if (!Number.isSafeInteger(n)) return fail(spec, source, raw);
  if (spec.min !== undefined && n < spec.min) return fail(spec, source, raw);
  if (spec.max !== undefined && n > spec.max) return fail(spec, source, raw);
  return { ok: true, value: n };
}

function checkString(spec: OptionSpec, text: string, source: ValueSource): Checked {
  if (text.trim() === '') return fail(spec, source, text);
  if (spec.kind === 'enum' && !(spec.values ?? []).includes(text)) return fail(spec, source, text);
  if (spec.kind === 'path') return { ok: true, value: path.resolve(source.baseDir, text) };
  return { ok: true, value: text };
}

/** Edit distance, for "did you mean" hints on misspelt keys. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const a = word.toLowerCase();
    const b = candidate.toLowerCase();
    // a key cut short ('limits.maxTimeout') is as good as a typo
    const d = a.length >= 4 && (b.startsWith(a) || a.startsWith(b)) ? 1 : distance(a, b);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

