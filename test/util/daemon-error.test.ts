// One error row (issue 32 item 3): every daemon error is a DaemonError whose code's row says what
// each surface shows, and no surface adapts daemon errors with its own `instanceof` ladder.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PermissionDenied } from '../../src/access/index.js';
import { CatalogError } from '../../src/catalog/index.js';
import { HostError } from '../../src/executor/executor-types.js';
import { SkillError } from '../../src/skills/index.js';
import { UpstreamError } from '../../src/upstream/index.js';
import { adaptError, DaemonError, ERROR_ROWS, toolErrorText } from '../../src/util/daemon-error.js';
import { DAEMON_ERROR_CLASSES, ERROR_CODES, isGuestErrorName } from '../../src/util/errors.js';
import { StoreError } from '../../src/util/store-error.js';
import { WorkspaceError } from '../../src/workspace/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? sources(rel) : e.name.endsWith('.ts') ? [rel] : [];
  });
}

describe('the error row', () => {
  it('has one row per code, each with a guest name and an HTTP status', () => {
    expect(Object.keys(ERROR_ROWS).sort()).toEqual([...ERROR_CODES].sort());
    for (const [code, row] of Object.entries(ERROR_ROWS)) {
      expect(isGuestErrorName(row.guest), code).toBe(true);
      expect(row.http, code).toBeGreaterThanOrEqual(400);
    }
  });

  it("adapts every domain's error by its code alone: one rule for the name a guest sees", () => {
    const seen = (e: unknown): [string, string, number] => {
      const a = adaptError(e);
      return [a.guest, a.outcome, a.http];
    };
    // A skill error: the same code, the same name, wherever it surfaces (import_skill, load_skill, MCP).
    expect(seen(new SkillError('SKILL_NOT_FOUND', 'no skill named x'))).toEqual(['ImportError', 'error', 404]);
    expect(seen(new SkillError('NOT_OWNER', 'not yours'))).toEqual(['PermissionError', 'denied', 403]);
    expect(seen(new WorkspaceError('NOT_FOUND', 'File not found: a'))).toEqual(['FileNotFoundError', 'error', 404]);
    expect(seen(new WorkspaceError('PATH_OUTSIDE', 'outside'))).toEqual(['PermissionError', 'denied', 403]);
    expect(seen(new PermissionDenied('bob', 'read_file', { kind: 'workspace', needs: 'read' }, 'no'))).toEqual(['PermissionError', 'denied', 403]);
    expect(seen(new UpstreamError('TOOL_ERROR', 'failed'))).toEqual(['ToolError', 'error', 502]);
    expect(seen(new UpstreamError('UNKNOWN_TOOL', 'nope'))).toEqual(['TypeError', 'invalid', 404]);
    expect(seen(new CatalogError('TOOL_NOT_FOUND', 'nope'))).toEqual(['ValueError', 'error', 404]);
    expect(seen(new StoreError('STORE_UNAVAILABLE', 'down'))).toEqual(['StoreError', 'error', 503]);
    // A sandbox method's own refusal names its class; the row still gives the rest.
    expect(seen(new HostError('INVALID_ARGUMENT', 'text must be a string', 'TypeError'))).toEqual(['TypeError', 'invalid', 400]);
    // Anything else is internal; a host TypeError keeps its name for the guest.
    expect(seen(new Error('boom'))).toEqual(['Error', 'internal', 500]);
    expect(seen(new TypeError('x is not a function'))).toEqual(['TypeError', 'internal', 500]);
  });

  it("says a tool error's text from the row: named and hinted for a store the tool used, as is otherwise", () => {
    expect(toolErrorText(adaptError(new WorkspaceError('NOT_FOUND', 'File not found: a.txt')), 'read_workspace_file')).toBe(
      'read_workspace_file failed: File not found: a.txt; call list_workspace_files to see the files that exist',
    );
    expect(toolErrorText(adaptError(new SkillError('SKILL_NOT_FOUND', 'no skill named x')), 'load_skill')).toBe('no skill named x');
    expect(toolErrorText(adaptError(new Error('boom')), 'list_skills')).toMatch(/^list_skills failed because of an internal error \(boom\)/);
  });

  it('every daemon error class is a DaemonError', () => {
    for (const e of [new SkillError('INVALID_NAME', 'x'), new WorkspaceError('NOT_FOUND', 'x'), new CatalogError('TOOL_NOT_FOUND', 'x'), new UpstreamError('TIMEOUT', 'x'), new StoreError('STORE_FULL', 'x'), new HostError('READ_ONLY', 'x')]) {
      expect(e).toBeInstanceOf(DaemonError);
    }
  });
});

describe('one adapter', () => {
  it('no file in src/ tests `instanceof` a daemon error class, except the file that defines it', () => {
    const classes = DAEMON_ERROR_CLASSES.filter((c) => c !== 'DaemonError' && c !== 'Incompatible');
    const ladder = new RegExp(`instanceof\\s+(${classes.join('|')})\\b`, 'g');
    const found: string[] = [];
    for (const file of sources('src')) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(ladder)) {
        if (!new RegExp(`class\\s+${m[1]}\\b`).test(text)) found.push(`${file}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('tool modules return what their output schemas declare: no `as unknown as` in src/mcp/tools', () => {
    const casts = sources('src/mcp/tools').flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bas unknown as\b/.test(line) ? [`${file}:${i + 1}`] : [])),
    );
    expect(casts).toEqual([]);
  });
});
