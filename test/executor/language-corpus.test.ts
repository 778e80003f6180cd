// The language corpus (fixtures/language-corpus.ts) through the real executor: every snippet
// gives its result in its own language, and without `language` the executor detects that language
// and gives the same result, naming it (CPython's ast.parse in the Python pool confirms what the
// coordinator cannot decide alone).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLanguage } from '../../src/executor/detect-language.js';
import type { DetectOptions } from '../../src/executor/detect-language.js';
import type { Language } from '../../src/executor/executor-types.js';
import { FULL_PERMISSIONS } from '../fixtures/config.js';
import { PYTHON_START_MS, startPython } from '../python/helpers.js';
import type { PythonHarness } from '../python/helpers.js';
import { AMBIGUOUS, CORPUS, JAVASCRIPT, PYTHON_ALSO_JS_SYNTAX } from './fixtures/language-corpus.js';
import type { CorpusEntry } from './fixtures/language-corpus.js';

let h: PythonHarness;
beforeAll(async () => {
  // Two Python processes, as a daemon has by default: a Python process serves one agent until it
  // is recycled, and the parse checks run as the daemon's own agent beside the corpus's.
  h = await startPython({ sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 2 } });
}, PYTHON_START_MS);
afterAll(async () => {
  await h?.close();
});

const IDENTITY = { agent: 'test', sessionId: 'corpus', workspaceNamespace: '', permissions: FULL_PERMISSIONS };

async function run(code: string, language?: Language): Promise<{ result: unknown; language: string | undefined }> {
  const r = await h.executor.execute({ code, ...(language ? { language } : {}), timeoutSeconds: 60, memoryMb: 256 }, IDENTITY);
  return { result: r.success ? r.result : `${r.error_type}: ${r.error}`, language: r.language };
}

const rows = (entries: CorpusEntry[]): [string, CorpusEntry][] => entries.map((e) => [`${e.language}: ${e.name}`, e]);

describe('the language corpus', () => {
  it('holds at least 100 snippets, a third of them Python that JavaScript also parses', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(100);
    expect(PYTHON_ALSO_JS_SYNTAX.length).toBeGreaterThanOrEqual(CORPUS.length / 3);
    expect(new Set(CORPUS.map((e) => e.name)).size).toBe(CORPUS.length);
  });

  it.each(rows(CORPUS))('%s gives its result in its own language', async (_name, entry) => {
    expect(await run(entry.code, entry.language)).toEqual({ result: entry.result, language: entry.language });
  });

  it.each(rows(CORPUS))('%s is detected and gives its result without a language', async (_name, entry) => {
    expect(await run(entry.code)).toEqual({ result: entry.result, language: entry.language });
  });

  it.each(rows([...PYTHON_ALSO_JS_SYNTAX, ...AMBIGUOUS, ...JAVASCRIPT]))('%s is decided without asking a Python process', async (_name, entry) => {
    const noPython: DetectOptions = {
      python: true,
      defaultLanguage: h.config.limits.defaultLanguage,
      checkPython: () => {
        throw new Error('asked CPython');
      },
    };
    expect((await detectLanguage(entry.code, noPython)).language).toBe(entry.language);
  });
});
