// Semantic re-ranking (src/catalog/embedding-*.ts): the sentence encoder finds a tool a query
// describes in other words, and search stays lexical, with the same answers for words the tools
// use, when the encoder is off or missing.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Embedder, lexicalEmbedder, sharedEmbedder } from '../../src/catalog/embedding-client.js';
import { embeddingsSettled, embeddingText, MAX_SEMANTIC_TOOLS } from '../../src/catalog/embedding-index.js';
import { entryId, ToolSearchIndex } from '../../src/catalog/search-index.js';
import { Catalog } from '../../src/catalog/index.js';
import type { DynamicToolEntry, ToolEntry } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { tempDir } from '../fixtures/config.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

const TOOLS: [string, string, string][] = [
  ['everart', 'generate_image', 'Generate images using EverArt Models. Returns a URL.'],
  ['github', 'create_issue', 'Create a new issue in a GitHub repository'],
  ['slack', 'slack_post_message', 'Post a new message to a Slack channel'],
  ['filesystem', 'move_file', 'Move or rename files and directories.'],
  ['google-maps', 'maps_elevation', 'Get elevation data for locations on the earth'],
];

function entry([server, name, description]: [string, string, string]): ToolEntry {
  return { name, description, category: server, mcp_server: server, functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'upstream' } as ToolEntry;
}

function dynamic([, name, description]: [string, string, string]): DynamicToolEntry {
  return { name, description, mcp_server: 'mixed', functions: [], use_cases: [], input_schema: { type: 'object' }, source: 'upstream' };
}

/** A catalog of TOOLS (as one upstream server's live tools) with its vector cache in `cacheDir`. */
function catalogWith(cacheDir: string, tools = TOOLS): Catalog {
  const catalog = new Catalog({ dir: tempDir('cem-semantic-catalog-'), logger: silentLogger(), watch: false, vectorCacheDir: cacheDir });
  catalog.setDynamicTools('mixed', tools.map(dynamic));
  return catalog;
}

function indexWith(embedder: () => Embedder): ToolSearchIndex {
  const index = new ToolSearchIndex(embedder);
  for (const t of TOOLS) index.add(entry(t));
  return index;
}

afterAll(() => sharedEmbedder().close());

describe('semantic re-ranking', () => {
  it('embeds a tool from its name in words and the first sentence of its description', () => {
    expect(embeddingText('generate_image', 'Generate images using EverArt Models. Returns a URL.')).toBe('generate image: Generate images using EverArt Models.');
    expect(embeddingText('getFileInfo', 'Line one\nline two')).toBe('get File Info: Line one\nline two');
  });

  it('puts the tool a paraphrase describes first, once the model and the vectors are ready', async () => {
    const index = indexWith(() => sharedEmbedder({ disabled: false })); // on, though the suite turns it off
    index.search('warm up'); // the first search starts the model
    expect(await sharedEmbedder().settled()).toBe('ready');
    await embeddingsSettled();
    await index.prepare('draw a picture of a cat in space');
    expect(index.search('draw a picture of a cat in space')[0]?.id).toBe(entryId('everart', 'generate_image'));
    // A word the tools use still ranks its tool first.
    expect(index.search('slack message')[0]?.id).toBe(entryId('slack', 'slack_post_message'));
  }, 60_000);

  it('answers a query prepared ahead without waiting for the encoder', async () => {
    const embedder = sharedEmbedder({ disabled: false });
    expect(await embedder.settled()).toBe('ready');
    const timeout = embedder.queryTimeoutMs;
    embedder.queryTimeoutMs = 0; // a query not prepared cannot be answered in time
    try {
      await embedder.prepareQuery('show me the weather in Paris');
      expect(embedder.embedQuerySync('show me the weather in Paris')).toBeDefined();
      expect(embedder.embedQuerySync('a query nobody prepared')).toBeUndefined();
    } finally {
      embedder.queryTimeoutMs = timeout;
    }
  }, 60_000);

  it('is lexical only when the encoder is off: the same answers, and the ranking never changes version', () => {
    const off = new Embedder({ disabled: true });
    expect(off.state).toBe('unavailable');
    expect(off.embedQuerySync('anything')).toBeUndefined();
    const index = indexWith(() => off);
    expect(index.search('create issue')[0]?.id).toBe(entryId('github', 'create_issue'));
    expect(index.search('draw a picture of a cat in space')[0]?.score).toBeLessThan(index.search('create issue')[0]?.score ?? 0);
    const version = index.rankingVersion;
    index.search('create issue');
    expect(index.rankingVersion).toBe(version);
  });

  it('says a search is lexical while tool vectors are still being made, then semantic; a restart with the cache embeds nothing', async () => {
    const embedder = sharedEmbedder({ disabled: false });
    expect(await embedder.settled()).toBe('ready');
    // Ranking, not this machine's load, is tested: a search waits for its query's vector.
    embedder.queryTimeoutMs = 10_000;
    const cacheDir = tempDir('cem-vector-cache-');
    const before = embedder.embeddedTexts;
    const first = catalogWith(cacheDir);
    // Asked at once: the vectors of these tools are not made yet.
    expect(first.search({ query: 'draw a picture of a cat in space' }).ranking).toBe('vectors');
    await embeddingsSettled();
    await first.prepareSearch('draw a picture of a cat in space');
    const semantic = first.search({ query: 'draw a picture of a cat in space', detail_level: 'name' });
    expect(semantic.ranking).toBe('semantic');
    expect(semantic.tools[0]?.name).toBe('generate_image');
    expect(embedder.embeddedTexts - before).toBe(TOOLS.length);
    await first.close(); // writes the cache
    expect(existsSync(path.join(cacheDir, 'vectors.bin'))).toBe(true);

    const restarted = before + TOOLS.length;
    const second = catalogWith(cacheDir);
    // The first query of the "restarted" catalog is ranked semantically, and nothing was embedded.
    await second.prepareSearch('move a document to another folder');
    const answer = second.search({ query: 'move a document to another folder', detail_level: 'name' });
    expect(answer.ranking).toBe('semantic');
    expect(answer.tools[0]?.name).toBe('move_file');
    await embeddingsSettled();
    expect(embedder.embeddedTexts).toBe(restarted);
    await second.close();
  }, 120_000);

  it("embeds none of the shipped catalog's tools: their vectors ship with it", async () => {
    const embedder = sharedEmbedder({ disabled: false });
    expect(await embedder.settled()).toBe('ready');
    embedder.queryTimeoutMs = 10_000;
    const before = embedder.embeddedTexts;
    const catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
    await catalog.start();
    await catalog.prepareSearch('remember a fact about a person');
    expect(catalog.search({ query: 'remember a fact about a person' }).ranking).toBe('semantic');
    await embeddingsSettled();
    expect(embedder.embeddedTexts).toBe(before);
    await catalog.close();
  }, 60_000);

  it('with deferModel, starts the model only when told to (the daemon: at the first MCP session), never at load', async () => {
    let starts = 0;
    const index = new ToolSearchIndex(
      () => {
        starts++;
        return lexicalEmbedder();
      },
      undefined,
      true,
    );
    index.add(entry(['github', 'create_issue', 'Create a new issue in a GitHub repository']));
    await new Promise((resolve) => setImmediate(resolve));
    expect(starts).toBe(0);
    index.startModel();
    expect(starts).toBe(1);
    index.startModel();
    expect(starts).toBe(1);
    // Without deferModel the same catalog starts it once loaded.
    let eager = 0;
    const other = new ToolSearchIndex(() => {
      eager++;
      return lexicalEmbedder();
    });
    other.add(entry(['github', 'create_issue', 'Create a new issue in a GitHub repository']));
    await new Promise((resolve) => setImmediate(resolve));
    expect(eager).toBe(1);
  });

  it(`ranks a catalog of more than ${MAX_SEMANTIC_TOOLS} tools lexically, without starting the model`, () => {
    const index = new ToolSearchIndex(() => {
      throw new Error('the model must not start for a catalog this large');
    });
    for (let i = 0; i <= MAX_SEMANTIC_TOOLS; i++) index.add(entry(['bulk', `tool_${i}`, `Does thing number ${i}`]));
    index.add(entry(['github', 'create_issue', 'Create a new issue in a GitHub repository']));
    expect(index.search('create issue')[0]?.id).toBe(entryId('github', 'create_issue'));
  });
});
