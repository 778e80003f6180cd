// The daemon's error vocabulary is closed: src/util/errors.ts lists every failure code, every log
// code and every error class, and workers/kit/guest-errors.ts every name a guest sees. This reads the
// sources with the TypeScript parser and fails on a code, class or guest name that is not listed,
// on the retired spelling INVALID_ARGUMENTS, and on a timeout made anywhere but the one maker.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DAEMON_ERROR_CLASSES, ERROR_CODES, GUEST_ERROR, LOG_CODES } from '../../src/util/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CODE_SHAPE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{4,}$/;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(rel));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

interface Found {
  /** First arguments of `new SomeError('CODE', ...)` / `new DaemonError('CODE', ...)`. */
  ctorCodes: { code: string; where: string }[];
  /** `code: 'CODE'` properties (failures and log records). */
  codeProps: { code: string; where: string }[];
  /** Literal members of `type XErrorCode = ...`. */
  unionCodes: { code: string; where: string }[];
  /** `class X extends Error` (or DaemonError, or one of its subclasses). */
  classes: { name: string; where: string }[];
  /** `type: 'XError'` properties (the error fields of a call's outcome). */
  outcomeTypes: { name: string; where: string }[];
  /** Every string literal, with where it is. */
  literals: { text: string; where: string }[];
}

function scan(files: readonly string[]): Found {
  const found: Found = { ctorCodes: [], codeProps: [], unionCodes: [], classes: [], outcomeTypes: [], literals: [] };
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);
    const where = (node: ts.Node): string => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node)) found.literals.push({ text: node.text, where: where(node) });
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && /(?:Error|Failure)$/.test(node.expression.text)) {
        const first = node.arguments?.[0];
        if (first && ts.isStringLiteral(first) && CODE_SHAPE.test(first.text)) found.ctorCodes.push({ code: first.text, where: where(first) });
      }
      // A subclass of DaemonError passes its code up: super('CODE', ...).
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
        const first = node.arguments[0];
        if (first && ts.isStringLiteral(first) && CODE_SHAPE.test(first.text)) found.ctorCodes.push({ code: first.text, where: where(first) });
      }
      if (ts.isPropertyDeclaration(node) && node.initializer && ts.isStringLiteral(node.initializer) && node.name.getText(sf) === 'code') {
        found.codeProps.push({ code: node.initializer.text, where: where(node) });
      }
      if (ts.isPropertyAssignment(node) && ts.isStringLiteral(node.initializer)) {
        const key = node.name.getText(sf);
        if (key === 'code' || key === 'error_code' || /^\w+Code$/.test(key)) found.codeProps.push({ code: node.initializer.text, where: where(node) });
        if (key === 'type' && /Error$/.test(node.initializer.text)) found.outcomeTypes.push({ name: node.initializer.text, where: where(node) });
      }
      if (ts.isTypeAliasDeclaration(node) && /ErrorCode$/.test(node.name.text)) {
        const literal = (t: ts.Node): void => {
          if (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)) found.unionCodes.push({ code: t.literal.text, where: where(t) });
          ts.forEachChild(t, literal);
        };
        literal(node.type);
      }
      if (ts.isClassDeclaration(node) && node.name && node.heritageClauses?.some((h) => h.types.some((t) => ['Error', 'DaemonError'].includes(t.expression.getText(sf))))) {
        found.classes.push({ name: node.name.text, where: where(node) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

const SRC = scan(sources('src'));
const WORKERS = scan(sources('workers'));
const ERRORS: ReadonlySet<string> = new Set(ERROR_CODES);
const LOGS: ReadonlySet<string> = new Set(LOG_CODES);
const GUEST: ReadonlySet<string> = new Set(Object.values(GUEST_ERROR));

const outside = <T extends { where: string }>(items: T[], ok: (item: T) => boolean): string[] => items.filter((i) => !ok(i)).map((i) => JSON.stringify(i));

describe('the error vocabulary is closed', () => {
  it('the scan sees the codes (it is not vacuous)', () => {
    expect(SRC.ctorCodes.length).toBeGreaterThan(50);
    expect(SRC.codeProps.length).toBeGreaterThan(40);
    expect(SRC.unionCodes.length).toBeGreaterThan(30);
    expect(SRC.classes.length).toBeGreaterThan(8);
  });

  it('every code a daemon error is made with is in ERROR_CODES', () => {
    expect(outside(SRC.ctorCodes, (c) => ERRORS.has(c.code))).toEqual([]);
  });

  it('every literal of an XErrorCode type is in ERROR_CODES', () => {
    expect(outside(SRC.unionCodes, (c) => ERRORS.has(c.code))).toEqual([]);
  });

  it('every `code:` literal in src/ is a failure code or a log code', () => {
    expect(outside(SRC.codeProps, (c) => ERRORS.has(c.code) || LOGS.has(c.code))).toEqual([]);
  });

  it('lists each code once, and no code is both a failure and a log code', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(new Set(LOG_CODES).size).toBe(LOG_CODES.length);
    expect(ERROR_CODES.filter((c) => LOGS.has(c))).toEqual([]);
  });

  it('every listed code is used somewhere (the list does not rot)', () => {
    const used = new Set([...SRC.ctorCodes, ...SRC.codeProps, ...SRC.unionCodes].map((c) => c.code));
    expect([...ERROR_CODES, ...LOG_CODES].filter((c) => !used.has(c))).toEqual([]);
  });

  it('has one spelling of a bad argument: INVALID_ARGUMENT, never INVALID_ARGUMENTS', () => {
    expect([...SRC.literals, ...WORKERS.literals].filter((l) => l.text.includes('INVALID_ARGUMENTS')).map((l) => l.where)).toEqual([]);
  });

  it('every error class of the daemon is listed in DAEMON_ERROR_CLASSES, and every listed one exists', () => {
    const declared = SRC.classes.map((c) => c.name);
    expect(outside(SRC.classes, (c) => (DAEMON_ERROR_CLASSES as readonly string[]).includes(c.name))).toEqual([]);
    expect(DAEMON_ERROR_CLASSES.filter((name) => !declared.includes(name))).toEqual([]);
  });

  it("a call's outcome names its error with a guest name (GUEST_ERROR), in src/ and in workers/", () => {
    expect(outside([...SRC.outcomeTypes, ...WORKERS.outcomeTypes], (t) => GUEST.has(t.name))).toEqual([]);
  });

  it("'TimeoutError' is spelled only by the one timeout maker (workers/kit/guest-errors.ts)", () => {
    // status-command.ts compares with the name of the DOMException AbortSignal.timeout() throws: Node's, not ours.
    const allowed = new Set(['workers/kit/guest-errors.ts', 'src/cli/status-command.ts']);
    const spelled = [...SRC.literals, ...WORKERS.literals].filter((l) => l.text === 'TimeoutError' && !allowed.has(l.where.slice(0, l.where.lastIndexOf(':'))));
    expect(spelled.map((l) => l.where)).toEqual([]);
  });
});
