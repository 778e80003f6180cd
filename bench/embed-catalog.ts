// Embeds the shipped catalog's tools once, at pack time, into catalog/.vectors.bin (committed), so
// a fresh daemon ranks its first query semantically without embedding anything. Texts whose
// vector the file already holds are not embedded again. Run after changing catalog/:
//
//   npm run embed-catalog
//
// test/catalog/vector-store.test.ts fails, naming this command, when a shipped tool's vector is
// missing. Other tools (upstream servers, skills, files added by hand) are embedded when they
// appear and cached in the data directory (src/catalog/vector-store.ts).

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog } from '../src/catalog/index.js';
import { Embedder } from '../src/catalog/embedding-client.js';
import { embeddingText } from '../src/catalog/embedding-index.js';
import { readVectorFile, SHIPPED_VECTORS_FILE, vectorKey, writeVectorFile } from '../src/catalog/vector-store.js';
import { silentLogger } from '../src/util/logger.js';
import { EMBEDDING_DIMENSIONS, EMBEDDING_MODEL } from '../src/catalog/embedding-protocol.js';

const BATCH = 16;

/** The texts the shipped catalog's tools are embedded from (as the search index makes them). */
export async function shippedTexts(dir: string): Promise<string[]> {
  const catalog = new Catalog({ dir, logger: silentLogger(), watch: false, semanticSearch: false });
  try {
    await catalog.start();
    return [...new Set(catalog.list().map((e) => embeddingText(e.name, e.description)))];
  } finally {
    await catalog.close();
  }
}

async function main(): Promise<void> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = path.resolve(here, '..', '..', 'catalog');
  const file = path.join(dir, SHIPPED_VECTORS_FILE);
  const texts = await shippedTexts(dir);
  const old = readVectorFile(file, EMBEDDING_MODEL, EMBEDDING_DIMENSIONS);
  const out = new Map<string, Float32Array>();
  const todo: string[] = [];
  for (const text of texts) {
    const known = old.get(vectorKey(EMBEDDING_MODEL, text));
    if (known) out.set(vectorKey(EMBEDDING_MODEL, text), known);
    else todo.push(text);
  }
  const embedder = new Embedder({ disabled: false });
  try {
    if (todo.length > 0 && (await embedder.settled()) !== 'ready') throw new Error(`the sentence encoder is unavailable: ${embedder.reason}`);
    for (let i = 0; i < todo.length; i += BATCH) {
      const batch = todo.slice(i, i + BATCH);
      const vectors = await embedder.embed(batch);
      batch.forEach((text, r) => out.set(vectorKey(EMBEDDING_MODEL, text), vectors.slice(r * EMBEDDING_DIMENSIONS, (r + 1) * EMBEDDING_DIMENSIONS)));
    }
  } finally {
    embedder.close();
  }
  await writeVectorFile(file, EMBEDDING_MODEL, EMBEDDING_DIMENSIONS, out);
  process.stdout.write(`${path.relative(process.cwd(), file)}: ${out.size} tools (${todo.length} embedded now, ${texts.length - todo.length} kept)\n`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
