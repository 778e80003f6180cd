// The catalog seen through a viewer: hidden entries are absent from search, get and categories;
// results cached for one viewer never answer another; callable entries rank first, and
// callable_only keeps only them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import type { CatalogViewer, ToolEntry } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { tempCatalog, writeCatalogFile } from './helpers.js';

let catalog: Catalog;
let cleanup: () => Promise<void>;

/** Sees the servers named; can call the tools named (as server.tool). */
function viewer(key: string, servers: string[], callable: string[] = []): CatalogViewer {
  return {
    key,
    visible: (e: ToolEntry) => servers.includes(e.mcp_server),
    callability: (e: ToolEntry) => (callable.includes(`${e.mcp_server}.${e.name}`) ? { callable: true } : { callable: false, why: `${e.mcp_server} is down` }),
  };
}

beforeAll(async () => {
  const made = await tempCatalog();
  cleanup = made.cleanup;
  await writeCatalogFile(made.dir, 'mail', 'send_email.json', { name: 'send_email', mcp_server: 'mail', description: 'Send an email message to a person.' });
  await writeCatalogFile(made.dir, 'mail', 'read_email.json', { name: 'read_email', mcp_server: 'mail', description: 'Read an email message.' });
  await writeCatalogFile(made.dir, 'chat', 'send_message.json', { name: 'send_message', mcp_server: 'chat', description: 'Send a chat message to a channel.' });
  catalog = new Catalog({ dir: made.dir, logger: silentLogger(), watch: false });
  await catalog.start();
});

afterAll(async () => {
  await catalog.close();
  await cleanup();
});

describe('a viewer', () => {
  it('never gets another viewer\'s cached results', () => {
    const mailOnly = catalog.search({ query: 'send message' }, viewer('m', ['mail']));
    const chatOnly = catalog.search({ query: 'send message' }, viewer('c', ['chat']));
    expect(mailOnly.tools.map((t) => t.category)).toEqual(['mail', 'mail']);
    expect(chatOnly.tools.map((t) => t.name)).toEqual(['send_message']);
    expect(catalog.search({ query: 'send message' }).count).toBe(3);
  });

  it('ranks what it can call first, and callable_only keeps only that', () => {
    const both = viewer('b', ['mail', 'chat'], ['chat.send_message']);
    const ranked = catalog.search({ query: 'send email message' }, both).tools;
    expect(ranked[0]).toMatchObject({ name: 'send_message', callable: true });
    expect(ranked.slice(1).every((t) => t.callable === false && t.why === `${t.category} is down`)).toBe(true);
    expect(catalog.search({ query: 'send email message', callable_only: true }, both).tools.map((t) => t.name)).toEqual(['send_message']);
  });

  it('gets only what it sees, and counts only that', () => {
    expect(() => catalog.get('send_message', null, viewer('m', ['mail']))).toThrow(/^Unknown tool "send_message"\. Did you mean: mail\.send_email/);
    expect(catalog.get('send_message', null, viewer('c', ['chat']))).toMatchObject({ category: 'chat', callable: false });
    expect(catalog.categories(viewer('m', ['mail']))).toEqual({ categories: { mail: { description: 'Tools of the mail MCP server.', tool_count: 2 } }, total_tools: 2 });
  });
});
