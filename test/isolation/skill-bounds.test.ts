// Attack class: skills without bounds. One agent saving skills in a loop used to store without limit
// (tens of MB past a 1 MiB workspace quota, every skill's code held in the daemon's heap). Each
// agent now has a share of the skill store, limits.skillQuotaCount skills and
// limits.skillQuotaBytes bytes; a save past it is refused naming the limit and the option, other
// agents keep their whole share, and get_execution_stats shows each agent its figures. The options
// are given as environment variables, which older daemons ignore (so this test fails there).

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, run, startIsolationDaemon, tool } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const COUNT = 5;
const BYTES = 200_000;

let d: IsolationDaemon;
let alice: Client;
let mallory: Client;
let hoarder: Client;
let operator: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({
    agents: [agent('alice'), agent('mallory'), agent('hoarder')],
    processes: 1,
    env: { CODE_EXEC_SKILL_QUOTA_COUNT: String(COUNT), CODE_EXEC_SKILL_QUOTA_BYTES: String(BYTES) },
  });
  [alice, mallory, hoarder, operator] = await Promise.all([d.client('alice'), d.client('mallory'), d.client('hoarder'), d.client('operator')]);
}, 60_000);

afterAll(async () => {
  await d?.stop();
});

async function stats(client: Client): Promise<Record<string, unknown>> {
  const answer = await tool(client, 'get_execution_stats');
  expect(answer.isError, answer.text).toBe(false);
  return answer.structured ?? {};
}

describe("each agent's share of the skill store", () => {
  it('a save loop stops at limits.skillQuotaCount, from code and over MCP, and others keep their share', async () => {
    const loop = await run(mallory, `
      const out = [];
      for (let i = 0; i < 12; i++) {
        try { save_skill('flood_' + i, 'export const v = ' + i + ';'); out.push('saved'); } catch (e) { out.push(e.message); }
      }
      return out;`);
    expect(loop.success, loop.error).toBe(true);
    const outcomes = loop.result as string[];
    expect(outcomes.filter((o) => o === 'saved')).toHaveLength(COUNT);
    expect(outcomes[COUNT]).toMatch(new RegExp(`agent "mallory" already has ${COUNT} skills, the limit is ${COUNT}.*limits\\.skillQuotaCount`));
    const overMcp = await tool(mallory, 'save_skill', { name: 'flood_mcp', code: 'export const v = 1;\n' });
    expect(overMcp.isError).toBe(true);
    expect(overMcp.text).toMatch(/limits\.skillQuotaCount/);
    // Replacing one of its own skills is no new skill: allowed.
    expect((await tool(mallory, 'save_skill', { name: 'flood_0', code: 'export const v = 100;\n' })).isError).toBe(false);
    // Alice's share is whole.
    for (let i = 0; i < COUNT; i++) expect((await tool(alice, 'save_skill', { name: `alice_${i}`, code: 'export const v = 1;\n' })).isError, `alice's save ${i}`).toBe(false);
    // A deleted skill gives its room back.
    expect((await tool(mallory, 'delete_skill', { name: 'flood_1' })).isError).toBe(false);
    expect((await tool(mallory, 'save_skill', { name: 'flood_mcp', code: 'export const v = 1;\n' })).isError).toBe(false);
  });

  it('large skills stop at limits.skillQuotaBytes', async () => {
    const big = (i: number): string => `export const blob${i} = ${JSON.stringify('b'.repeat(60_000))};\n`;
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await tool(hoarder, 'save_skill', { name: `hoard_${i}`, code: big(i) }));
    expect(results.slice(0, 3).map((r) => r.isError)).toEqual([false, false, false]);
    expect(results[3]?.isError).toBe(true);
    expect(results[3]?.text).toMatch(new RegExp(`over its ${BYTES}-byte quota.*limits\\.skillQuotaBytes`));
  });

  it('get_execution_stats shows each agent its share, and the operator every agent within theirs', async () => {
    const mine = (await stats(mallory))['skills'] as { mine?: Record<string, number> };
    expect(mine.mine).toMatchObject({ skills: COUNT, quota_count: COUNT, quota_bytes: BYTES });
    const daemon = (await stats(operator))['skills'] as { by_agent: Record<string, { skills: number; bytes: number }>; code_cache: { bytes: number; max_bytes: number } };
    expect(Object.keys(daemon.by_agent).sort()).toEqual(['alice', 'hoarder', 'mallory']);
    for (const [name, usage] of Object.entries(daemon.by_agent)) {
      expect(usage.skills, `${name}'s skills`).toBeLessThanOrEqual(COUNT);
      expect(usage.bytes, `${name}'s skill bytes`).toBeLessThanOrEqual(BYTES);
    }
    expect(daemon.code_cache.bytes).toBeLessThanOrEqual(daemon.code_cache.max_bytes);
  });
});
