// The slow suites (multi-agent isolation, resilience under floods and kills, the packed tarball):
// `npm run test:slow`, run by CI after the main suite. One file at a time: each starts real
// daemons and measures a bystander's latency, which a second suite running beside it would skew.
import { defineConfig } from 'vitest/config';
import { SLOW_SUITES } from './vitest.config.js';

export default defineConfig({
  test: {
    // Search stays lexical in daemons the tests start: the sentence encoder would load in each
    // (about 200 MB, seconds of CPU). Its own tests turn it on (test/catalog/semantic-search.test.ts).
    env: { CODE_EXEC_SEMANTIC_SEARCH: 'false' },
    include: SLOW_SUITES,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    // Names each file as it starts and, every 20 s, the files still running (CI logs never go silent).
    reporters: ['default', './test/reporters/progress-reporter.ts'],
  },
});
