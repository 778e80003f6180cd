// PII flow rules: which PII types may reach which upstream tools. Rules are checked in order;
// for each type, the first rule whose tool pattern and types both match decides; no match allows.

import type { PiiFlowRule } from '../config/config-types.js';
import type { FlowDecision } from './pii-types.js';
import { toolPatternMatches } from '../access/patterns.js';

export { toolPatternMatches };

function ruleCoversType(rule: PiiFlowRule, type: string): boolean {
  return rule.types.some((t) => t === '*' || t.toUpperCase() === type);
}

/**
 * Decides whether values of `types` may be sent to `server.tool`. Refuses with the first rule
 * that denies one of them, and a message naming the rule, the type and the tool.
 */
export function checkFlow(
  rules: readonly PiiFlowRule[],
  server: string,
  tool: string,
  types: readonly string[],
): FlowDecision<PiiFlowRule> {
  if (rules.length === 0 || types.length === 0) return { allowed: true };
  const target = `${server}.${tool}`;
  for (const rawType of types) {
    const type = rawType.toUpperCase();
    const index = rules.findIndex((rule) => ruleCoversType(rule, type) && toolPatternMatches(rule.tools, target));
    const rule = rules[index];
    if (rule === undefined || rule.action === 'allow') continue;
    const message =
      `PII flow refused: pii.flows rule #${index + 1} (deny ${rule.types.join(', ')} to '${rule.tools}') ` +
      `forbids ${type} values from reaching tool '${target}'. Remove the ${type} values from the ` +
      `arguments, or change the rule in the configuration.`;
    return { allowed: false, rule, type, message };
  }
  return { allowed: true };
}
