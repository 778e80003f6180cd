// PII flow rules: which types may reach which upstream tools; first matching rule per type wins,
// no match allows, and a refusal names the rule, the type and the tool.
import { describe, expect, it } from 'vitest';
import type { PiiFlowRule } from '../../src/config/config-types.js';
import { checkFlow, toolPatternMatches } from '../../src/pii/index.js';

const rules: PiiFlowRule[] = [
  { tools: 'crm.*', types: ['EMAIL', 'PHONE'], action: 'allow' },
  { tools: 'slack.post_*', types: ['*'], action: 'deny' },
  { tools: '*', types: ['CREDIT_CARD'], action: 'deny' },
  { tools: '*', types: ['EMAIL'], action: 'deny' },
];

describe('checkFlow', () => {
  it('allows when no rule speaks of the type or tool', () => {
    expect(checkFlow([], 'slack', 'post_message', ['EMAIL'])).toEqual({ allowed: true });
    expect(checkFlow(rules, 'github', 'create_issue', ['PHONE'])).toEqual({ allowed: true });
    expect(checkFlow(rules, 'github', 'create_issue', [])).toEqual({ allowed: true });
  });

  it('lets the first matching rule win for each type', () => {
    expect(checkFlow(rules, 'crm', 'add_contact', ['EMAIL', 'PHONE'])).toEqual({ allowed: true });
    const refused = checkFlow(rules, 'github', 'create_issue', ['EMAIL']);
    expect(refused).toMatchObject({ allowed: false, rule: rules[3], type: 'EMAIL' });
  });

  it('refuses a denied type even when another type is allowed', () => {
    const refused = checkFlow(rules, 'crm', 'add_contact', ['EMAIL', 'CREDIT_CARD']);
    expect(refused).toMatchObject({ allowed: false, rule: rules[2], type: 'CREDIT_CARD' });
  });

  it('applies wildcard types and tool patterns', () => {
    expect(checkFlow(rules, 'slack', 'post_message', ['IP_ADDRESS'])).toMatchObject({ allowed: false, rule: rules[1] });
    expect(checkFlow(rules, 'slack', 'list_channels', ['IP_ADDRESS'])).toEqual({ allowed: true });
  });

  it('says which rule refused which type and to which tool', () => {
    const refused = checkFlow(rules, 'slack', 'post_message', ['EMAIL']);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.message).toContain('rule #2');
    expect(refused.message).toContain("'slack.post_*'");
    expect(refused.message).toContain('EMAIL');
    expect(refused.message).toContain("'slack.post_message'");
  });

  it('compares types without regard to case', () => {
    expect(checkFlow([{ tools: '*', types: ['email'], action: 'deny' }], 's', 't', ['EMAIL']).allowed).toBe(false);
  });
});

describe('toolPatternMatches', () => {
  it('treats * as any run of characters and everything else literally', () => {
    expect(toolPatternMatches('github.*', 'github.create_issue')).toBe(true);
    expect(toolPatternMatches('github.*', 'githubx.create_issue')).toBe(false);
    expect(toolPatternMatches('*.send_*', 'mail.send_email')).toBe(true);
    expect(toolPatternMatches('a.b', 'aXb')).toBe(false);
    expect(toolPatternMatches('a+(b).c', 'a+(b).c')).toBe(true);
    expect(toolPatternMatches('*', 'anything.at_all')).toBe(true);
  });
});
