// Attack class: a stateful upstream server shared by agents. With the real server-memory configured
// `"instances": "per-agent"`, two agents writing at once lose nothing they were told was written,
// and neither can read, search or delete the other's entities.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryConfig } from '../upstream/helpers.js';
import { agent, expectNoSecret, run, startIsolationDaemon, waitForServers } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const ENTITIES = 40;
const dir = mkdtempSync(path.join(tmpdir(), 'cem-isolation-memory-'));
let d: IsolationDaemon;
let alpha: Client;
let beta: Client;

beforeAll(async () => {
  // The documented setting for server-memory: it rewrites its whole file on every change, so it
  // needs its own instance per agent AND one call at a time (its own concurrent calls race too).
  const memory = { ...memoryConfig(path.join(dir, 'memory-${agent}.jsonl')), instances: 'per-agent', max_concurrency: 1 };
  d = await startIsolationDaemon({ agents: [agent('alpha'), agent('beta')], processes: 2, config: { mcpServers: { memory } } });
  [alpha, beta] = await Promise.all([d.client('alpha'), d.client('beta')]);
  await Promise.all([waitForServers(alpha, ['memory']), waitForServers(beta, ['memory'])]);
}, 120_000);

afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes this agent's entities one call each, all in flight at once; the names acknowledged. */
function writeAll(client: Client, who: string): Promise<string[]> {
  const code = `
    const acked = [];
    await Promise.all(Array.from({ length: ${ENTITIES} }, async (_, i) => {
      const name = '${who}-entity-' + i;
      await tools.memory.create_entities({ entities: [{ name, entityType: 'secret', observations: ['${who} private note ' + i] }] });
      acked.push(name);
    }));
    return acked;`;
  return run(client, code, 'javascript', 60).then((r) => {
    expect(r.success, r.error).toBe(true);
    return r.result as string[];
  });
}

async function graphNames(client: Client): Promise<string[]> {
  const r = await run(client, 'const g = await tools.memory.read_graph({}); return (g.entities ?? []).map((e) => e.name)');
  expect(r.success, r.error).toBe(true);
  return (r.result as string[]).sort();
}

describe('server-memory with one instance per agent', () => {
  it('two agents writing at once lose nothing and see only their own entities', async () => {
    const [alphaAcked, betaAcked] = await Promise.all([writeAll(alpha, 'alpha'), writeAll(beta, 'beta')]);
    expect(alphaAcked).toHaveLength(ENTITIES);
    expect(betaAcked).toHaveLength(ENTITIES);
    expect(await graphNames(alpha)).toEqual([...alphaAcked].sort());
    expect(await graphNames(beta)).toEqual([...betaAcked].sort());
  }, 120_000);

  it("one agent cannot search, open or delete the other's entities", async () => {
    const planted = await run(alpha, "return await tools.memory.create_entities({ entities: [{ name: 'alpha-solo', entityType: 'secret', observations: ['alpha private note solo'] }] })");
    expect(planted.success, planted.error).toBe(true);
    const probe = await run(beta, `
      const seen = {};
      seen.search = await tools.memory.search_nodes({ query: 'alpha' });
      seen.open = await tools.memory.open_nodes({ names: ['alpha-solo', 'alpha-entity-0'] });
      try { await tools.memory.delete_entities({ entityNames: ['alpha-solo'] }); } catch (e) { seen.deleted = e.message; }
      write_file('loot.json', JSON.stringify(seen));
      return seen;`);
    expectNoSecret(probe, ['alpha private note']);
    const names = await graphNames(alpha);
    expect(names).toContain('alpha-solo');
    expect(names.filter((n) => n.startsWith('beta'))).toEqual([]);
  }, 60_000);
});
