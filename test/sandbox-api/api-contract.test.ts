// The sandbox API table (workers/kit/api-contract.ts) against every place that implements or
// documents it: the coordinator's host methods, the catalog's `sandbox` entries, and (through the
// real pool) the JavaScript globals. The reachability audit checks the JavaScript side in depth.

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { createHostApi } from '../../src/executor/index.js';
import type { CallIdentity, HostApi, HostCallContext } from '../../src/executor/index.js';
import { PiiVaultStore } from '../../src/pii/index.js';
import { createSandboxApi } from '../../src/sandbox-api/index.js';
import { SkillStore } from '../../src/skills/index.js';
import { UpstreamManager } from '../../src/upstream/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { Workspace } from '../../src/workspace/index.js';
import { HOST_METHODS, SANDBOX_API } from '../../workers/kit/api-contract.js';
import { FULL_PERMISSIONS, tempDir, testConfig } from '../fixtures/config.js';

const repoCatalog = fileURLToPath(new URL('../../catalog', import.meta.url));
const root = tempDir('cem-contract-');
let host: HostApi;
let skills: SkillStore;
let catalog: Catalog;
let upstream: UpstreamManager;

const identity: CallIdentity = { agent: 'a', sessionId: 's', workspaceNamespace: 'a', permissions: { ...FULL_PERMISSIONS, net: ['example.com'] } };
const ctx = (): HostCallContext => ({ identity, language: 'javascript', signal: new AbortController().signal, account: () => {} });

beforeAll(async () => {
  const config = { ...testConfig(), catalogDir: repoCatalog, skillsDir: path.join(root, 'skills'), workspaceDir: path.join(root, 'workspace') };
  const logger = silentLogger();
  catalog = new Catalog({ dir: config.catalogDir, logger, watch: false });
  skills = new SkillStore({ dir: config.skillsDir, logger });
  upstream = new UpstreamManager({ servers: {}, logger, onToolsChanged: () => {} });
  await Promise.all([catalog.start(), skills.start(), upstream.start()]);
  const workspace = new Workspace({ root: config.workspaceDir, maxFileBytes: config.limits.maxFileBytes });
  const api = createSandboxApi({ config, skills, pii: new PiiVaultStore(), catalog, upstream });
  host = createHostApi({ config, workspace, logger, extensions: api.extensions, toolNames: api.toolNames, virtual: api.virtual });
});

afterAll(async () => {
  await Promise.all([skills?.close(), catalog?.close(), upstream?.close()]);
});

describe('the sandbox API contract', () => {
  it('names every host method the coordinator implements, and nothing else reaches it', async () => {
    for (const method of HOST_METHODS) {
      // Garbage arguments: the method exists, so it refuses them (or answers), never "not available".
      const outcome = await host.call(method, [], ctx()).then(
        () => 'answered',
        (err: unknown) => (err as { code?: string }).code ?? 'error',
      );
      expect(outcome, method).not.toBe('UNKNOWN_METHOD');
    }
    for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'exec', 'require']) {
      await expect(host.call(method, [], ctx()), method).rejects.toMatchObject({ code: 'UNKNOWN_METHOD' });
    }
  });

  it('documents in catalog/sandbox exactly the entries marked for the catalog', () => {
    const files = readdirSync(path.join(repoCatalog, 'sandbox'))
      .filter((f) => f.endsWith('.json') && !f.startsWith('_'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
    const documented = SANDBOX_API.filter((x) => x.catalog)
      .map((x) => x.name)
      .sort();
    expect(files).toEqual(documented);
  });

  it('has one entry per name, and every host-backed entry names its method', () => {
    const names = SANDBOX_API.map((x) => x.name);
    expect(new Set(names).size).toBe(names.length);
    for (const x of SANDBOX_API) if (x.kind === 'host-sync' || x.kind === 'host-async') expect(x.hostMethod, x.name).toBeTruthy();
  });
});
