// Agents re-run the same code often: preprocessing (TS strip, parse, wrap) is cached by source,
// per thread that preprocesses (the pool host's main thread on the relay path, each worker thread
// on the direct path). A crash of the compilers fails one call, not the thread.

import { LRUCache } from 'lru-cache';
import { preprocess } from './preprocess.js';
import type { Preprocessed } from './preprocess.js';
import type { SandboxLanguage } from '../kit/protocol.js';

const MB = 1024 * 1024;
/** Sources longer than this are preprocessed each time, not kept. */
const MAX_CACHED_SOURCE = 256 * 1024;

const cache = new LRUCache<string, Preprocessed>({ max: 500, maxSize: 32 * MB, sizeCalculation: (v, k) => k.length + (v.ok ? v.source.length : 200) });

export function preprocessCached(code: string, language: SandboxLanguage): Preprocessed {
  const key = `${language}\0${code}`;
  let p = cache.get(key);
  if (!p) {
    try {
      p = preprocess(code, language);
    } catch (err) {
      return { ok: false, error: { type: 'SyntaxError', message: `could not compile the code: ${(err as Error)?.message ?? String(err)}` } };
    }
    if (code.length < MAX_CACHED_SOURCE) cache.set(key, p);
  }
  return p;
}

/** This runtime's preprocessing, as the kit's pool host loads it (RuntimeProcess.preprocessor). */
export default preprocessCached;
