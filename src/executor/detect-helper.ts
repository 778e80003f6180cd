// Language detection's parsers off the coordinator's event loop. An agent chooses its code's size
// and shape: acorn's scope bookkeeping is quadratic in one scope's names, the TypeScript stripper
// costs 1-2 s per MiB and traps (then loads afresh, ~0.1 s) on deep nesting and long chains. Inline,
// one agent's calls held every other agent's requests for that long. So short JavaScript (up to
// INLINE_DETECT_CHARS) is read inline, and everything longer, and every TypeScript parse, runs on
// a helper thread (detect-worker.ts), where each agent's detections take turns with every other
// agent's (util/helper-threads.ts): a flood of one agent's waits behind itself.

import { HelperThreads } from '../util/helper-threads.js';
import type { HelperThreadsStats } from '../util/helper-threads.js';
import { isStripperTrap, stripperStrikes } from '../util/trap-strikes.js';
import { stripperTrapped } from '../../workers/js/strip-types.js';
import { codeFacts, parsesAs, typescriptDiagnosis } from './detect-facts.js';
import type { CodeFacts, TypeScriptDiagnosis } from './detect-facts.js';
import type { DetectTask } from './detect-worker.js';

/** Code up to this many characters is parsed as JavaScript on the calling thread (well under a millisecond). */
export const INLINE_DETECT_CHARS = 2 * 1024;
/**
 * The helper thread's heap bound, MiB: detection parses at most 32 KiB (detect-facts.ts) and the
 * stripper takes about 10 MiB, so this is room to spare, and a thread past it dies alone (the
 * detection it ran falls back to the default language) instead of growing the daemon.
 */
export const DETECT_HELPER_HEAP_MB = 96;

/** One thread: detection is short; it exits after 30 s idle, so an idle daemon holds none. */
const helper = new HelperThreads(import.meta.url, 'src/executor/detect-worker.js', { threads: 1, idleMs: 30_000, maxHeapMb: DETECT_HELPER_HEAP_MB });

/** What detection concludes when its helper thread died under a job: nothing parsed, nothing looked like anything. */
const NO_FACTS: CodeFacts = { signals: { python: 0, javascript: 0 }, jsParses: false };

/**
 * `task` on the helper thread in `agent`'s turn; `fallback` when the thread died under it (its
 * memory bound); undefined when there is no helper (a partial build: the caller runs it inline).
 */
function onHelper<T>(task: DetectTask, agent: string | undefined, fallback: T): Promise<T> | undefined {
  return helper.run<T>(task, agent)?.catch(() => fallback);
}

/** codeFacts, inline for short code, on the helper thread (in `agent`'s turn) for long code. */
export async function codeFactsOffLoop(code: string, names: readonly string[], agent?: string): Promise<CodeFacts> {
  const off = code.length > INLINE_DETECT_CHARS ? onHelper<CodeFacts>({ kind: 'facts', code, names }, agent, NO_FACTS) : undefined;
  return off ?? codeFacts(code, names);
}

/** Whether the code parses as JavaScript: inline when short, on the helper thread when long. */
export async function parsesOffLoop(code: string, agent?: string): Promise<boolean> {
  const off = code.length > INLINE_DETECT_CHARS ? onHelper<boolean>({ kind: 'parses', code }, agent, false) : undefined;
  return off ?? parsesAs(code, 'javascript');
}

/** What a job that killed the helper thread (its heap bound) says: the code is too much for the stripper. */
const THREAD_DIED: TypeScriptDiagnosis = { verdict: 'too-deep', tooDeep: stripperTrapped("detection's thread ran out of memory"), trapped: true };

/**
 * The type stripper's verdict, always on the helper thread: a trap there (code too deep for it)
 * costs the thread a fresh stripper, loaded in the same job, so in the turn of the agent whose
 * code trapped it, never in the next agent's; and it is a strike against that agent
 * (util/trap-strikes.ts), which while cooling down gets 'too-deep' with the refusal at once.
 */
export async function typescriptOffLoop(code: string, agent = ''): Promise<TypeScriptDiagnosis> {
  const refusal = stripperStrikes.refusal(agent);
  if (refusal !== undefined) return { verdict: 'too-deep', tooDeep: refusal };
  const diagnosis = (await onHelper<TypeScriptDiagnosis>({ kind: 'typescript', code }, agent, THREAD_DIED)) ?? typescriptDiagnosis(code);
  if (diagnosis.trapped === true) stripperStrikes.strike(agent);
  return diagnosis;
}

/** Ends the helper thread (daemon shutdown, tests); a later detection starts it again. */
export function closeDetectHelper(): Promise<void> {
  return helper.close();
}

/** Figures for get_execution_stats: helper threads, queued and completed detections. */
export function detectHelperStats(): HelperThreadsStats {
  return helper.stats();
}

/** Why `agent`'s TypeScript is refused now (it keeps trapping the stripper), or undefined. */
export function typescriptRefusal(agent: string): string | undefined {
  return stripperStrikes.refusal(agent);
}

/** Charges a trap of a sandbox thread's stripper, as the run's error reports it, to the agent that ran the code. */
export function chargeRunTrap(agent: string, error: string | undefined): void {
  if (error !== undefined && isStripperTrap(error)) stripperStrikes.strike(agent);
}
