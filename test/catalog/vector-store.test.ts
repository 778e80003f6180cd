// Tool vectors kept on disk (src/catalog/vector-store.ts): keyed by model and text, written
// atomically, ignored when another model's or damaged, and shipped for the default catalog so a
// fresh daemon embeds none of its tools. No model runs here (semantic-search.test.ts runs it).

import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { embeddingText } from '../../src/catalog/embedding-index.js';
import { Catalog } from '../../src/catalog/index.js';
import { readVectorFile, SHIPPED_VECTORS_FILE, vectorKey, VectorStore, writeVectorFile } from '../../src/catalog/vector-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { EMBEDDING_DIMENSIONS, EMBEDDING_MODEL } from '../../src/catalog/embedding-protocol.js';
import { tempDir } from '../fixtures/config.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

function unit(seed: number, dimensions = 4): Float32Array {
  const v = Float32Array.from({ length: dimensions }, (_, i) => Math.sin(seed + i));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('vector store', () => {
  it('keys a vector by model and text: another model or another text is another key', () => {
    expect(vectorKey('m1', 'read a file')).toBe(vectorKey('m1', 'read a file'));
    expect(vectorKey('m2', 'read a file')).not.toBe(vectorKey('m1', 'read a file'));
    expect(vectorKey('m1', 'read a file.')).not.toBe(vectorKey('m1', 'read a file'));
  });

  it('writes new vectors to the cache and a new store reads them back; nothing half-written is left', async () => {
    const dir = tempDir('cem-vectors-');
    const cacheFile = path.join(dir, 'cache', 'vectors.bin');
    const first = new VectorStore({ model: 'm', dimensions: 4, cacheFile });
    first.put('alpha', unit(1));
    first.put('beta', unit(2));
    await first.flush();
    expect(readdirSync(path.dirname(cacheFile))).toEqual(['vectors.bin']);
    const second = new VectorStore({ model: 'm', dimensions: 4, cacheFile });
    expect(second.size).toBe(2);
    expect([...(second.get('beta') ?? [])]).toEqual([...unit(2)]);
    expect(second.get('gamma')).toBeUndefined();
  });

  it("ignores another model's file, a damaged file and a missing one", async () => {
    const dir = tempDir('cem-vectors-');
    const other = path.join(dir, 'other.bin');
    await writeVectorFile(other, 'another-model', 4, new Map([[vectorKey('another-model', 'alpha'), unit(1)]]));
    expect(readVectorFile(other, 'm', 4).size).toBe(0);
    expect(readVectorFile(other, 'another-model', 8).size).toBe(0);
    const damaged = path.join(dir, 'damaged.bin');
    writeFileSync(damaged, '{"format":1,"model":"m","dimensions":4,"keys":["a","b"]}\n\u0001\u0002');
    expect(readVectorFile(damaged, 'm', 4).size).toBe(0);
    writeFileSync(damaged, 'not json at all\n');
    expect(readVectorFile(damaged, 'm', 4).size).toBe(0);
    expect(readVectorFile(path.join(dir, 'missing.bin'), 'm', 4).size).toBe(0);
    const store = new VectorStore({ model: 'm', dimensions: 4, cacheFile: damaged, shipped: [other] });
    expect(store.size).toBe(0);
  });

  it('survives a cache write that fails: reported, never thrown, and the vectors stay usable', async () => {
    const dir = tempDir('cem-vectors-');
    // The cache's folder cannot be made: a file stands where it would be.
    writeFileSync(path.join(dir, 'blocker'), 'not a folder');
    const errors: unknown[] = [];
    const store = new VectorStore({ model: 'm', dimensions: 4, cacheFile: path.join(dir, 'blocker', 'vectors.bin'), onError: (e) => errors.push(e) });
    store.put('alpha', unit(1));
    await expect(store.flush()).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    store.put('beta', unit(2));
    await expect(store.flush()).resolves.toBeUndefined();
    expect(errors).toHaveLength(2);
    expect(store.get('alpha')).toBeDefined();
  });

  it('reads shipped vectors without writing to them', async () => {
    const dir = tempDir('cem-vectors-');
    const shipped = path.join(dir, SHIPPED_VECTORS_FILE);
    await writeVectorFile(shipped, 'm', 4, new Map([[vectorKey('m', 'alpha'), unit(1)]]));
    const store = new VectorStore({ model: 'm', dimensions: 4, shipped: [shipped] });
    expect(store.get('alpha')).toBeDefined();
    store.put('beta', unit(2));
    await store.flush();
    expect(readVectorFile(shipped, 'm', 4).size).toBe(1);
  });

  it('ships a vector for every tool of the default catalog (else: npm run embed-catalog)', async () => {
    const catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false, semanticSearch: false });
    await catalog.start();
    const texts = [...new Set(catalog.list().map((e) => embeddingText(e.name, e.description)))];
    await catalog.close();
    const shipped = readVectorFile(path.join(DEFAULT_CATALOG_DIR, SHIPPED_VECTORS_FILE), EMBEDDING_MODEL, EMBEDDING_DIMENSIONS);
    const missing = texts.filter((t) => !shipped.has(vectorKey(EMBEDDING_MODEL, t)));
    expect(missing, `catalog/${SHIPPED_VECTORS_FILE} lacks these tools' vectors: run npm run embed-catalog`).toEqual([]);
    expect(texts.length).toBeGreaterThan(50);
  });
});
