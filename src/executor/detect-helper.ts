// Language detection's parsers off the coordinator's event loop. An agent chooses its code's size
// and shape: acorn's scope bookkeeping is quadratic in one scope's names, the TypeScript stripper
// costs 1-2 s per MiB and traps (then reloads, ~0.1 s) on nesting past about 150 levels. Inline,
// one agent's calls held every other agent's requests for that long. So short JavaScript (up to
// INLINE_DETECT_CHARS) is read inline, and everything longer, and every TypeScript parse, runs on
// a helper thread (detect-worker.ts), where each agent's detections take turns with every other
// agent's (util/helper-threads.ts): a flood of one agent's waits behind itself.

import { HelperThreads } from '../util/helper-threads.js';
import type { HelperThreadsStats } from '../util/helper-threads.js';
import { codeFacts, parsesAs } from './detect-facts.js';
import type { CodeFacts } from './detect-facts.js';
import type { DetectTask } from './detect-worker.js';

/** Code up to this many characters is parsed as JavaScript on the calling thread (well under a millisecond). */
export const INLINE_DETECT_CHARS = 2 * 1024;

/** One thread: detection is short; it exits after 30 s idle, so an idle daemon holds none. */
const helper = new HelperThreads(import.meta.url, 'src/executor/detect-worker.js', { threads: 1, idleMs: 30_000 });

/** codeFacts, inline for short code, on the helper thread (in `agent`'s turn) for long code. */
export async function codeFactsOffLoop(code: string, names: readonly string[], agent?: string): Promise<CodeFacts> {
  const onHelper = code.length > INLINE_DETECT_CHARS ? helper.run<CodeFacts>({ kind: 'facts', code, names } satisfies DetectTask, agent) : undefined;
  return onHelper ?? codeFacts(code, names);
}

/** parsesAs: TypeScript always on the helper thread (its stripper traps on deep nesting), long JavaScript too. */
export async function parsesOffLoop(code: string, language: 'javascript' | 'typescript', agent?: string): Promise<boolean> {
  const onHelper = language === 'typescript' || code.length > INLINE_DETECT_CHARS ? helper.run<boolean>({ kind: 'parses', code, language } satisfies DetectTask, agent) : undefined;
  return onHelper ?? parsesAs(code, language);
}

/** Ends the helper thread (daemon shutdown, tests); a later detection starts it again. */
export function closeDetectHelper(): Promise<void> {
  return helper.close();
}

/** Figures for get_execution_stats: helper threads, queued and completed detections. */
export function detectHelperStats(): HelperThreadsStats {
  return helper.stats();
}
