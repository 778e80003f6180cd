// The documentation tables generated from the code's own tables (scripts/gen-docs.ts) match what
// is committed: an option or a sandbox name added without `npm run docs` fails here.

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../../src/config/options.js';
import { SANDBOX_API } from '../../workers/kit/api-contract.js';
import { generatedDocs, renderOptionsTable, renderSandboxApiTable, replaceRegion } from '../../scripts/gen-docs.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('generated docs', () => {
  it('the committed docs hold what npm run docs writes', () => {
    for (const [file, { current, wanted }] of generatedDocs(ROOT)) {
      expect(current === wanted, `${file} is stale: run npm run docs (and commit the result)`).toBe(true);
    }
  });

  it('lists every option and every sandbox name, one row each', () => {
    const options = renderOptionsTable();
    for (const o of OPTIONS) expect(options).toContain(`| \`${o.key}\` | \`${o.env}\` \`--${o.flag}\` |`);
    const api = renderSandboxApiTable();
    for (const x of SANDBOX_API) expect(api).toContain(`| \`${x.name}\` |`);
    expect(api.split('\n')).toHaveLength(SANDBOX_API.length + 2);
  });

  it('replaces only between its markers, and refuses a file without them', () => {
    const text = 'before\n<!-- generated:x -->\nold\n<!-- /generated:x -->\nafter\n';
    const out = replaceRegion(text, 'f.md', 'x', 'NEW');
    expect(out.startsWith('before\n<!-- generated:x -->\n')).toBe(true);
    expect(out).toContain('\nNEW\n');
    expect(out).not.toContain('old');
    expect(out.endsWith('<!-- /generated:x -->\nafter\n')).toBe(true);
    expect(replaceRegion(out, 'f.md', 'x', 'NEW')).toBe(out);
    expect(() => replaceRegion('no markers', 'f.md', 'x', 'NEW')).toThrow(/f\.md must hold exactly one <!-- generated:x -->/);
  });

});
