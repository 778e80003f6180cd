// The configuration examples people copy: the README's "A config file for agents and upstream
// servers" and the file-only example of docs/configuration.md. Each loads through the real config
// loader without a problem, and every key and value it uses is in the table that documents it
// (src/config/options.ts, from which docs/configuration.md's table is generated, and that page's
// table of per-server keys), so no example teaches a value the reference does not list.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { FILE_ONLY_OPTIONS, OPTIONS } from '../../src/config/options.js';
import { REPO } from '../fixtures/mcp/cli.js';

const README = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const CONFIGURATION = readFileSync(path.join(REPO, 'docs', 'configuration.md'), 'utf8');

/** The first ```json block after `heading` in `text`. */
function jsonAfter(text: string, heading: string): Record<string, unknown> {
  const at = text.indexOf(heading);
  expect(at, `"${heading}" is in the page`).toBeGreaterThanOrEqual(0);
  const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(at));
  expect(block, `a JSON example follows "${heading}"`).not.toBeNull();
  return JSON.parse(block![1]!) as Record<string, unknown>;
}

const EXAMPLES: [string, Record<string, unknown>][] = [
  ['README', jsonAfter(README, '## A config file for agents and upstream servers')],
  ['docs/configuration.md', jsonAfter(CONFIGURATION, 'File-only options:')],
];

const fileOnlyDoc = (key: string): string => FILE_ONLY_OPTIONS.find((o) => o.key === key)?.doc ?? '';
/** The per-server keys of docs/configuration.md ("Per upstream server, besides how to reach it"). */
const SERVER_KEYS = [...CONFIGURATION.slice(CONFIGURATION.indexOf('Per upstream server')).matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.each(EXAMPLES)('the configuration example of %s', (_, example) => {
  it('loads through the real config loader', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cem-config-example-'));
    const file = path.join(dir, 'code-execution-mcp.json');
    writeFileSync(file, JSON.stringify(example));
    const { config } = loadConfig({ configFile: file, cwd: dir, root: REPO });
    expect(config.agents.map((a) => a.name)).toEqual((example['agents'] as { name: string }[]).map((a) => a.name));
    expect(Object.keys(config.mcpServers)).toEqual(Object.keys(example['mcpServers'] as object));
  });

  it('uses only keys and values its reference table lists', () => {
    const documented = new Set([...OPTIONS.map((o) => o.key), ...FILE_ONLY_OPTIONS.map((o) => o.key)]);
    for (const [key, value] of Object.entries(example)) {
      const keys = typeof value === 'object' && value !== null && !Array.isArray(value) && !documented.has(key) ? Object.keys(value).map((k) => `${key}.${k}`) : [key];
      for (const k of keys) expect(documented.has(k), `${k} is in the options table`).toBe(true);
    }
    for (const server of Object.values(example['mcpServers'] as Record<string, Record<string, unknown>>)) {
      for (const key of Object.keys(server)) expect(fileOnlyDoc('mcpServers').includes(`"${key}"`) || SERVER_KEYS.includes(key), `mcpServers key "${key}" is documented`).toBe(true);
    }
    const permissionsDoc = fileOnlyDoc('defaultPermissions');
    for (const agent of example['agents'] as Record<string, unknown>[]) {
      for (const key of Object.keys(agent)) expect(fileOnlyDoc('agents'), `agents key "${key}"`).toContain(`"${key}"`);
      for (const key of Object.keys((agent['limits'] as object | undefined) ?? {})) expect(fileOnlyDoc('agents'), `agents limits key "${key}"`).toContain(`"${key}"`);
      for (const [key, value] of Object.entries((agent['permissions'] as Record<string, unknown> | undefined) ?? {})) {
        expect(permissionsDoc, `permission "${key}"`).toContain(`"${key}"`);
        if (typeof value === 'string') expect(permissionsDoc, `permissions.${key} value "${value}"`).toMatch(new RegExp(`"${key}": [a-z|-]*\\b${value}\\b`));
      }
    }
  });
});
