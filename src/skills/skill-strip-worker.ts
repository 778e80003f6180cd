// The skill store's stripper thread (piscina, started by skill-strip.ts): TypeScript skills lose
// their types here, off the coordinator's event loop, in a thread with its own heap bound. Pure
// computation on a copy of the code; a trap costs this thread a fresh stripper (strip-types.ts).

import { lowerThreadPriority } from '../util/helper-thread-priority.js';
import { stripTypeScript } from '../../workers/js/strip-types.js';
import type { StripResult } from '../../workers/js/strip-types.js';

lowerThreadPriority();

/** The stripper's answer, or 'missing' when amaro is not installed. */
export type SkillStripAnswer = StripResult | 'missing';

export default function strip(code: string): SkillStripAnswer {
  try {
    return stripTypeScript(code, 'strip-only');
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'TYPESCRIPT_MISSING') return 'missing';
    throw error;
  }
}
