// Shared fixtures for the catalog tests: temporary catalog folders, entry files, and a bounded
// poll for changes that arrive through the file watcher.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { Logger } from '../../src/util/logger.js';

export const DEFAULT_CATALOG_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../catalog');

/** A fresh folder under the OS temp dir; a copy of the default catalog when `copyDefault`. */
export async function tempCatalog(copyDefault = false): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'catalog-test-'));
  const dir = path.join(root, 'catalog');
  if (copyDefault) await cp(DEFAULT_CATALOG_DIR, dir, { recursive: true });
  else await mkdir(dir);
  return { dir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export interface EntryFields {
  name: string;
  description?: string;
  mcp_server?: string;
  functions?: string[];
  use_cases?: string[];
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

export function entryJson(fields: EntryFields): string {
  return JSON.stringify(
    {
      description: `The ${fields.name} tool.`,
      functions: [],
      use_cases: [],
      input_schema: { type: 'object', properties: {} },
      ...fields,
    },
    null,
    2,
  );
}

/** Write `dir/category/file` (an entry object is serialised; a string is written as is). */
export async function writeCatalogFile(dir: string, category: string, file: string, content: EntryFields | string): Promise<void> {
  await mkdir(path.join(dir, category), { recursive: true });
  await writeFile(path.join(dir, category, file), typeof content === 'string' ? content : entryJson(content));
}

/** Poll `check` until it returns true; fail after `timeoutMs` (a generous bound, not a measurement). */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A real pino logger whose records are kept in memory, to check what was logged. */
export function captureLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, records };
}
