// Attack class: a shared parser on the coordinator's event loop. save_skill stripped TypeScript
// inline, so a skill that traps the stripper (a long label or `keyof` chain that passes the
// nesting guard) made the daemon's main thread load a fresh stripper per save, holding every
// agent's requests meanwhile. Now skills are stripped on their own helper thread (heap-bounded),
// in the saving agent's turn, and an agent that keeps trapping it is refused for a cool-down
// while another agent's TypeScript skills still parse.

import { afterAll, describe, expect, it } from 'vitest';
import { parseSkillModule } from '../../src/skills/skill-parse.js';
import { closeSkillStripper } from '../../src/skills/skill-strip.js';
import { STRIKES_BEFORE_COOL_DOWN } from '../../src/util/trap-strikes.js';
import { stripperLoads, stripperTraps } from '../../workers/js/strip-types.js';
import { TRAPPING_SHAPES } from '../executor/fixtures/trapping-typescript.js';

const labels = TRAPPING_SHAPES['labels (870)'] as (n: number) => string;
const trapping = `export const a: number = 1;\n${labels(5000)}\n`;
const fine = 'export function add(a: number, b: number): number { return a + b }\n';

afterAll(async () => {
  await closeSkillStripper();
});

describe('TypeScript skills on the stripper thread', () => {
  it("traps on the helper thread, never this one, and cools down the trapping agent, not another", async () => {
    const [loads, traps] = [stripperLoads(), stripperTraps()];
    for (let i = 0; i < STRIKES_BEFORE_COOL_DOWN; i++) {
      await expect(parseSkillModule(trapping, 'typescript', 'trap/index.ts', 'skill-alpha')).rejects.toThrow(/TypeScript too deeply nested for the type stripper: it ran out of stack/);
    }
    // Inline, each save above trapped (and reloaded) this thread's stripper.
    expect([stripperLoads(), stripperTraps()]).toEqual([loads, traps]);
    // Alpha cools down: even a fine skill is refused at once, saying why.
    await expect(parseSkillModule(fine, 'typescript', 'add/index.ts', 'skill-alpha')).rejects.toThrow(/TypeScript refused for this agent for \d+ s more: its code trapped the type stripper 5 times/);
    // Beta's TypeScript skill parses meanwhile.
    const parsed = await parseSkillModule(fine, 'typescript', 'add/index.ts', 'skill-beta');
    expect(parsed.js).toContain('function add(a        , b        )');
  });
});
