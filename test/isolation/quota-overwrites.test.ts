// Attack class: a quota that undercounts concurrent overwrites. Each overwrite of one file used to
// subtract the size it saw before writing, so many overwrites at once subtracted the same old size
// many times and the count fell far below what the disk held; the agent then wrote past its quota.
// Changes of one file are now counted one after the other, so what the namespace holds on disk
// never passes its quota, and another agent's namespace is untouched.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, startIsolationDaemon, tool } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

const QUOTA = 1_000_000;
const CHUNK = 'q'.repeat(100_000);

let d: IsolationDaemon;
let alice: Client;
let mallory: Client;

beforeAll(async () => {
  d = await startIsolationDaemon({ agents: [agent('alice'), agent('mallory')], processes: 1, config: { limits: { workspaceQuotaBytes: QUOTA } } });
  [alice, mallory] = await Promise.all([d.client('alice'), d.client('mallory')]);
}, 60_000);

afterAll(async () => {
  await d?.stop();
});

/** What the namespace holds on disk, as get_execution_stats measures it (a walk of the folder). */
async function held(client: Client): Promise<number> {
  const stats = await tool(client, 'get_execution_stats');
  return Number((stats.structured?.['workspace'] as { total_bytes?: number } | undefined)?.total_bytes);
}

const write = (client: Client, filename: string, content: string): Promise<{ isError: boolean; text: string }> => tool(client, 'write_workspace_file', { filename, content });

describe('concurrent overwrites of one file', () => {
  it('never let an agent hold more than its quota on disk', async () => {
    for (let i = 0; i < 5; i++) expect((await write(mallory, `base${i}.txt`, CHUNK)).isError).toBe(false);
    expect((await write(mallory, 'target.txt', CHUNK)).isError).toBe(false);
    for (let round = 0; round < 3; round++) {
      // Twenty overwrites at once, half emptying the file and half filling it again.
      await Promise.all(Array.from({ length: 20 }, (_, i) => write(mallory, 'target.txt', i % 2 === 0 ? '' : CHUNK)));
      await write(mallory, 'target.txt', CHUNK);
    }
    let refusal = '';
    for (let i = 0; i < 20 && refusal === ''; i++) {
      const answer = await write(mallory, `more${i}.txt`, CHUNK);
      if (answer.isError) refusal = answer.text;
    }
    expect(refusal).toMatch(/workspace quota exceeded.*limits\.workspaceQuotaBytes/);
    const onDisk = await held(mallory);
    expect(onDisk, `mallory's namespace holds ${onDisk} bytes on disk; its quota is ${QUOTA}`).toBeLessThanOrEqual(QUOTA);
    // Alice's namespace is her own: her quota is whole.
    for (let i = 0; i < 9; i++) expect((await write(alice, `a${i}.txt`, CHUNK)).isError, `alice's write ${i}`).toBe(false);
    expect(await held(alice)).toBe(900_000);
  }, 120_000);
});
