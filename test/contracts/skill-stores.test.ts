// The skill store contract (skill-store-contract.ts) against the folder store.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { SkillStore } from '../../src/skills/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { describeSkillStoreContract } from './skill-store-contract.js';

const base = mkdtempSync(path.join(tmpdir(), 'skill-contract-'));
let dir = '';
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function started(options: ConstructorParameters<typeof SkillStore>[0]): Promise<SkillStore> {
  const store = new SkillStore(options);
  await store.start();
  return store;
}

describeSkillStoreContract('folder', {
  store(options = {}) {
    dir = path.join(base, `skills-${++n}`);
    return started({ dir, logger: silentLogger(), ...options });
  },
  reopen: () => started({ dir, logger: silentLogger() }),
});
