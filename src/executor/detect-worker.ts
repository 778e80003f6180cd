// The detection helper thread (piscina, started by detect-helper.ts): runs the parsers and the
// line heuristics of language detection on long or TypeScript code, off the coordinator's event
// loop. Pure computation on a copy of the code; what comes back is plain data.

import { lowerThreadPriority } from '../util/helper-thread-priority.js';
import { codeFacts, parsesAs, typescriptDiagnosis } from './detect-facts.js';
import type { CodeFacts, TypeScriptDiagnosis } from './detect-facts.js';

lowerThreadPriority();

export type DetectTask =
  | { kind: 'facts'; code: string; names: readonly string[] }
  | { kind: 'parses'; code: string }
  | { kind: 'typescript'; code: string };

export default function detect(task: DetectTask): CodeFacts | boolean | TypeScriptDiagnosis {
  if (task.kind === 'facts') return codeFacts(task.code, task.names);
  return task.kind === 'parses' ? parsesAs(task.code, 'javascript') : typescriptDiagnosis(task.code);
}
