// Optional dependencies: "not installed" is told apart from a failure inside a package that is
// there, and the message says what is off and how to install it.

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { OPTIONAL_PACKAGES, isMissingPackage, missingPackageMessage } from '../../src/util/optional-package.js';

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
});
