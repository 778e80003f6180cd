// Tests run the real pool: worker scripts are loaded from dist/, so `npm test` builds first.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: sandbox processes compete with test files for CPU, so keep file-level
    // parallelism modest rather than timing-sensitive.
    maxWorkers: 2,
  },
});
