// SKILL.md front matter: the fast reader for the store's own `key: value` lines must agree with
// the YAML parser wherever it answers, and broken front matter must be reported, not guessed at.

import { describe, expect, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseSimpleFrontMatter, parseSkillMarkdown, renderSkillMarkdown } from '../../src/skills/front-matter.js';

const VALUES = [
  'plain words', 'Keep items: above a threshold', 'a #b', 'a#b', 'it\'s fine', '"quoted"', "'single'", '123', '1e5', '0x1F', '0o17',
  '.5', '+1', '-1', 'true', 'False', 'NULL', 'null', '~', '', ' leading', 'trailing ', 'ends with:', 'x: y', 'a [b] {c}',
  '2025-11-04T10:00:00.000Z', 'd8a933495ddbdf54fcc157601c1c99c1614ad880f9072b80b91d3f3b3d549031', '1234567890123456789012345678901234567890',
  'Yes', 'on', 'émoji ✓ ünïcode', 'tab\there', '- dash', '? question', '& anchor', '* alias', '! tag', '% directive', '@at', '`tick`',
  'multi\nline', 'back\\slash', 'comma, separated', 'under_score', '_lead', 'NaN', '.inf', 'x:y', 'http://example.com/a?b=c#d',
];

describe('fast front matter reader', () => {
  test.each(VALUES)('agrees with the YAML parser on a raw value %j', (value) => {
    const text = `name: n\ndescription: ${value}`;
    const fast = parseSimpleFrontMatter(text);
    if (fast === null) return;
    expect(fast).toEqual(parse(text));
  });

  test.each(VALUES)('reads what the store writes for %j exactly as YAML does', (value) => {
    const yaml = stringify({ name: 'n', description: value }, { lineWidth: 0 }).replace(/\n$/, '');
    const fast = parseSimpleFrontMatter(yaml);
    expect(parse(yaml)).toEqual({ name: 'n', description: value });
    if (fast !== null) expect(fast).toEqual({ name: 'n', description: value });
  });

  test('the store\'s own front matter takes the fast path', () => {
    const markdown = renderSkillMarkdown(
      { name: 'a', description: 'Keeps rows', language: 'javascript', created: '2025-11-04T10:00:00.000Z', updated: '2025-11-04T10:00:00.000Z', hash: 'ab12' },
      '# a\n',
    );
    const inner = /^---\n([\s\S]*?)\n---\n/.exec(markdown)?.[1] ?? '';
    expect(parseSimpleFrontMatter(inner)).not.toBeNull();
    expect(parseSkillMarkdown(markdown).fields.description).toBe('Keeps rows');
  });

  test('duplicate keys and comments go to the YAML parser', () => {
    expect(parseSimpleFrontMatter('name: a\nname: b')).toBeNull();
    expect(parseSimpleFrontMatter('# comment\nname: a')).toBeNull();
  });
});

describe('SKILL.md parsing', () => {
  test('broken front matter is reported', () => {
    expect(() => parseSkillMarkdown('---\nname: a\n')).toThrow(/no closing/);
    expect(() => parseSkillMarkdown('---\ndescription: [x\n---\n')).toThrow(/not valid YAML/);
    expect(() => parseSkillMarkdown('---\n- a\n- b\n---\n')).toThrow(/mapping/);
    expect(() => parseSkillMarkdown('---\ndescription: 5\n---\n')).toThrow(/"description" must be a string/);
    expect(() => parseSkillMarkdown('---\nlanguage: ruby\n---\n')).toThrow(/"language" must be one of/);
    expect(() => parseSkillMarkdown('---\ncreated: yesterday\n---\n')).toThrow(/ISO 8601/);
  });

  test('a SKILL.md without front matter is all body', () => {
    expect(parseSkillMarkdown('# Notes\n')).toEqual({ fields: {}, body: '# Notes\n' });
  });

  test('CRLF files and an empty front matter are read', () => {
    expect(parseSkillMarkdown('---\r\nname: a\r\ndescription: b\r\n---\r\nbody').fields).toEqual({ name: 'a', description: 'b' });
    expect(parseSkillMarkdown('---\n---\nbody')).toEqual({ fields: {}, body: 'body' });
  });
});
