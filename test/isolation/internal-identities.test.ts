// Attack class: identities the daemon uses for itself taken by a configured agent. An agent named
// like the `authToken` operator ("default") acted with the operator's skills; one named like the
// daemon's checker ("daemon") shared the Python interpreter that parses every agent's code; one
// named "local" is the single user. The config now refuses such names, in any letter case, with
// a message naming the reserved names; and every identity the daemon's own code acts under is
// one of them (a source scan, so a new internal identity cannot be added unreserved).

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../fixtures/mcp/cli.js';
import { agent, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon } from './helpers.js';

/** Starts a daemon with these agents; the error it fails with, or null when it served (then stopped). */
async function startError(names: string[]): Promise<string | null> {
  let started: IsolationDaemon | undefined;
  try {
    started = await startIsolationDaemon({ agents: names.map((n) => agent(n)), processes: 1 });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  await started.stop();
  return null;
}

describe("the daemon's own identities are not agent names", () => {
  it.each([
    ['daemon', "the daemon's own checks"],
    ['Default', 'the operator identified by authToken'],
    ['LOCAL', 'the single local user'],
  ])('an agent named %s beside two others is refused at start', async (name, what) => {
    const error = await startError(['alice', name, 'bob']);
    expect(error, `a daemon configured with an agent named "${name}" started`).not.toBeNull();
    expect(error).toContain(`agents[1].name "${name}" is the name of ${what}`);
    expect(error).toMatch(/reserved: local, default, daemon, in any letter case\); give the agent another name/);
  }, 60_000);

  it('every identity the daemon acts under in its own code is reserved', () => {
    const found = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith('.ts')) {
          const text = readFileSync(full, 'utf8');
          for (const m of text.matchAll(/\bagent(?:Name)?:\s*'([^']+)'/g)) found.add(m[1] as string);
          for (const m of text.matchAll(/_AGENT_NAME\s*=\s*'([^']+)'/g)) found.add(m[1] as string);
        }
      }
    };
    walk(path.join(REPO, 'src'));
    walk(path.join(REPO, 'workers'));
    expect([...found].sort()).toEqual(['daemon', 'default', 'local']);
  });
});
