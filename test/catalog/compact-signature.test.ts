// The compact TypeScript signature (get_tool_definition's format "typescript"): what it cuts, that
// it says so, that the full style cuts nothing, and that every compact signature of the real
// catalog (333 tools of 27 public MCP servers) is still valid TypeScript and smaller.

import ts from 'typescript';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { loadRealCatalog } from '../../bench/search-eval.js';
import { COMPACT_STYLE, schemaToTypeScript, SHORTENED_NOTE } from '../../src/catalog/index.js';

const long = 'First sentence says what it does. '.repeat(3) + 'A second paragraph that goes on and on about edge cases, '.repeat(6);
const entry = {
  name: 'big_tool',
  description: long,
  input_schema: {
    type: 'object',
    properties: {
      mode: { enum: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'], description: 'The mode. More words about the mode that nobody needs to read before calling it, and then some more.' },
      outer: { type: 'object', properties: { inner: { type: 'object', properties: { deep: { type: 'object', properties: { leaf: { type: 'string' } } } } } } },
    },
    required: ['mode'],
  },
};

describe('compact signature', () => {
  it('cuts long descriptions to whole sentences, deep objects to `object`, long enums to their first values, and says where the rest is', () => {
    const compact = schemaToTypeScript(entry, COMPACT_STYLE);
    expect(compact).toContain('/* +4 more */');
    expect(compact).toContain('"f" /* +4 more */');
    expect(compact).not.toContain('"g"');
    expect(compact).toMatch(/deep\?: object/);
    expect(compact).not.toContain('leaf');
    expect(compact).toContain('The mode. …');
    expect(compact.endsWith(SHORTENED_NOTE)).toBe(true);
    const full = schemaToTypeScript(entry);
    for (const kept of ['"j"', 'leaf', 'nobody needs to read', 'on and on about edge cases']) expect(full).toContain(kept);
    expect(full).not.toContain('Shortened');
  });

  it('leaves a small tool as the full style prints it, with no note', () => {
    const small = { name: 'read', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string', description: 'the path' } }, required: ['path'] } };
    expect(schemaToTypeScript(small, COMPACT_STYLE)).toBe(schemaToTypeScript(small));
  });

  it('is valid TypeScript for every tool of the real catalog, at under half the full tokens in all', () => {
    const servers = loadRealCatalog();
    let full = 0;
    let compact = 0;
    const files: string[] = [];
    for (const s of servers) {
      for (const t of s.tools) {
        const source = { name: t.name, description: t.description, input_schema: t.inputSchema };
        const text = schemaToTypeScript(source, COMPACT_STYLE);
        full += countTokens(schemaToTypeScript(source));
        compact += countTokens(text);
        files.push(text.replace(/^function /m, 'declare function '));
      }
    }
    expect(files.length).toBeGreaterThan(300);
    const diagnostics = files.flatMap((text, i) => {
      const file = ts.createSourceFile(`sig${i}.d.ts`, `export {};\n${text}\n`, ts.ScriptTarget.ES2022, true);
      return (file as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics.map((d) => `${i}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    });
    expect(diagnostics).toEqual([]);
    expect(compact).toBeLessThan(full / 2);
  });
});
