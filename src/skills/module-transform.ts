// Rewrites a skill module into the body of an async function `(import_skill) => exports`, the form
// the sandbox evaluates: SES compartments have no module loader we want to open, and a function
// body lets imports become `await import_skill(...)`. Edits blank or replace text in place, so
// every line of the skill stays on its line and runtime errors point into the skill as written.
// Imports are hoisted onto line 1 (ES imports run before the body too); the exports object is
// returned from an appended last line.

import type {
  AnonymousClassDeclaration,
  AnonymousFunctionDeclaration,
  ModuleDeclaration,
  Node,
  Pattern,
  Program,
  Statement,
  VariableDeclaration,
} from 'acorn';
import { SkillError } from './skill-error.js';
import { skillNameProblem } from './skill-names.js';
import type { ParsedModule } from './skill-parse.js';

export interface TransformedModule {
  body: string;
  /** Exported names, in source order (`export *` names are only known at run time). */
  exports: string[];
  /** Skills imported or re-exported, in source order, without repeats. */
  imports: string[];
  /** For each own export, the top-level local it names (null for expressions and re-exports). */
  locals: { exported: string; local: string | null }[];
}

/** `skill:NAME`, `skills/NAME`, `./NAME`, `../NAME`, with an optional `/index` and `.js`/`.ts`. */
const SKILL_SPECIFIER = /^(?:skill:|skills\/|\.\.?\/)([A-Za-z_][A-Za-z0-9_-]*)(?:\/index)?(?:\.(?:js|ts|mjs))?$/;

type BindingKind = VariableDeclaration['kind'] | 'function' | 'class' | 'import';

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * `reference` maps an imported skill's name to what import_skill is called with (its pin, see
 * skill-pins.ts); by default the name itself.
 */
export function transformModule(parsed: ParsedModule, label: string, reference: (skill: string) => string = (skill) => skill): TransformedModule {
  return new Transformer(parsed, label, reference).run();
}

class Transformer {
  readonly #js: string;
  readonly #program: Program;
  readonly #label: string;
  readonly #edits: Edit[] = [];
  readonly #prologue: string[] = [];
  /** Export entries of the returned object, as source text (`f: f`, `get n() { return n; }`). */
  readonly #entries: string[] = [];
  readonly #exports: string[] = [];
  readonly #locals: { exported: string; local: string | null }[] = [];
  readonly #stars: string[] = [];
  readonly #imports: string[] = [];
  readonly #kinds = new Map<string, BindingKind>();
  #needsCheck = false;
  #counter = 0;
  readonly #checkHelper: string;
  readonly #spreadHelper: string;
  readonly #reference: (skill: string) => string;

  constructor(parsed: ParsedModule, label: string, reference: (skill: string) => string) {
    this.#reference = reference;
    this.#js = parsed.js;
    this.#program = parsed.program;
    this.#label = label;
    this.#checkHelper = this.#fresh('$$requireExports', false);
    this.#spreadHelper = this.#fresh('$$withoutDefault', false);
  }

  run(): TransformedModule {
    this.#rejectHostModuleFeatures();
    this.#collectBindings();
    const body = this.#program.body;
    const hasExports = body.some((s) => s.type.startsWith('Export'));
    for (const statement of body) this.#rewrite(statement);
    if (!hasExports) {
      // The seed's style: a file of plain top-level functions exports all of them.
      for (const statement of body) {
        if (statement.type === 'FunctionDeclaration' && statement.id) this.#export(statement.id.name, statement.id.name, statement.id.name);
      }
    }
    if (this.#js.startsWith('#!')) {
      const end = this.#js.search(/[\r\n\u2028\u2029]|$/);
      this.#edits.push({ start: 0, end, text: ' '.repeat(end) });
    }
    return {
      body: this.#assemble(),
      exports: this.#exports,
      imports: this.#imports,
      locals: this.#locals,
    };
  }

  #rejectHostModuleFeatures(): void {
    walk(this.#program, (node) => {
      if (node.type === 'ImportExpression') {
        throw this.#error('IMPORT_NOT_ALLOWED', 'dynamic import() is not available in skills; use `await import_skill("name")`', node);
      }
      if (node.type === 'MetaProperty' && (node as Node & { meta: { name: string } }).meta.name === 'import') {
        throw this.#error('IMPORT_NOT_ALLOWED', 'import.meta is not available in skills', node);
      }
    });
  }

  #collectBindings(): void {
    for (const statement of this.#program.body) {
      const declaration = declarationOf(statement);
      if (!declaration) continue;
      if (declaration.type === 'FunctionDeclaration' && declaration.id) this.#kinds.set(declaration.id.name, 'function');
      else if (declaration.type === 'ClassDeclaration' && declaration.id) this.#kinds.set(declaration.id.name, 'class');
      else if (declaration.type === 'VariableDeclaration') {
        for (const d of declaration.declarations) for (const name of patternNames(d.id)) this.#kinds.set(name, declaration.kind);
      } else if (declaration.type === 'ImportDeclaration') {
        for (const s of declaration.specifiers) this.#kinds.set(s.local.name, 'import');
      }
    }
    const clash = ['import_skill'].find((name) => this.#kinds.has(name));
    if (clash) throw new SkillError('SYNTAX_ERROR', `${this.#label}: a skill cannot declare a top-level "${clash}"; it is the sandbox's import function`);
  }

  #rewrite(statement: Statement | ModuleDeclaration): void {
    switch (statement.type) {
      case 'ImportDeclaration': {
        const skill = this.#skillOf(statement.source, statement);
        this.#blank(statement.start, statement.end);
        if (statement.specifiers.length === 0) {
          this.#prologue.push(`await import_skill(${JSON.stringify(this.#reference(skill))});`);
          return;
        }
        const module = this.#fresh('$$skill_');
        const named: string[] = [];
        const pattern: string[] = [];
        const namespaces: string[] = [];
        for (const s of statement.specifiers) {
          if (s.type === 'ImportNamespaceSpecifier') {
            namespaces.push(s.local.name);
          } else {
            const imported = s.type === 'ImportDefaultSpecifier' ? 'default' : moduleExportName(s.imported);
            named.push(imported);
            pattern.push(imported === s.local.name ? imported : `${propertyKey(imported)}: ${s.local.name}`);
          }
        }
        this.#prologue.push(this.#load(module, skill, named));
        for (const local of namespaces) this.#prologue.push(`const ${local} = ${module};`);
        if (pattern.length > 0) this.#prologue.push(`const { ${pattern.join(', ')} } = ${module};`);
        return;
      }
      case 'ExportNamedDeclaration': {
        if (statement.declaration) {
          const declaration = statement.declaration;
          this.#blank(statement.start, declaration.start);
          if (declaration.type === 'VariableDeclaration') {
            for (const d of declaration.declarations) for (const name of patternNames(d.id)) this.#export(name, name, name);
          } else {
            this.#export(declaration.id.name, declaration.id.name, declaration.id.name);
          }
          return;
        }
        this.#blank(statement.start, statement.end);
        if (statement.source) {
          const skill = this.#skillOf(statement.source, statement);
          const module = this.#fresh('$$skill_');
          const names = statement.specifiers.map((s) => moduleExportName(s.local));
          this.#prologue.push(this.#load(module, skill, names));
          for (const s of statement.specifiers) {
            this.#export(moduleExportName(s.exported), null, `${module}[${JSON.stringify(moduleExportName(s.local))}]`);
          }
        } else {
          for (const s of statement.specifiers) {
            const local = moduleExportName(s.local);
            this.#export(moduleExportName(s.exported), local, local);
          }
        }
        return;
      }
      case 'ExportDefaultDeclaration': {
        const declaration = statement.declaration;
        if ((declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration') && declaration.id) {
          this.#blank(statement.start, declaration.start);
          this.#export('default', declaration.id.name, declaration.id.name);
          return;
        }
        const local = this.#fresh('$$dflt', false);
        this.#replace(statement.start, declaration.start, `const ${local} = `);
        if (this.#js[statement.end - 1] !== ';') this.#edits.push({ start: statement.end, end: statement.end, text: ';' });
        this.#export('default', null, local);
        return;
      }
      case 'ExportAllDeclaration': {
        const skill = this.#skillOf(statement.source, statement);
        this.#blank(statement.start, statement.end);
        const module = this.#fresh('$$skill_');
        this.#prologue.push(this.#load(module, skill, []));
        if (statement.exported) this.#export(moduleExportName(statement.exported), null, module);
        else this.#stars.push(module);
        return;
      }
      default:
        return;
    }
  }

  #load(module: string, skill: string, names: string[]): string {
    const target = JSON.stringify(this.#reference(skill));
    if (names.length === 0) return `const ${module} = await import_skill(${target});`;
    this.#needsCheck = true;
    return `const ${module} = ${this.#checkHelper}(await import_skill(${target}), ${JSON.stringify(skill)}, ${JSON.stringify(names)});`;
  }

  #export(exported: string, local: string | null, value: string): void {
    this.#exports.push(exported);
    this.#locals.push({ exported, local });
    const kind = local === null ? undefined : this.#kinds.get(local);
    const key = propertyKey(exported);
    // `let`/`var` exports are live bindings in ES modules: a getter keeps them live.
    this.#entries.push(kind === 'let' || kind === 'var' ? `get ${key}() { return ${value}; }` : `${key}: ${value}`);
  }

  #skillOf(source: Node & { value?: unknown }, statement: Node): string {
    const specifier = typeof source.value === 'string' ? source.value : '';
    const match = SKILL_SPECIFIER.exec(specifier);
    const name = match?.[1];
    if (name === undefined || skillNameProblem(name) !== null) {
      throw this.#error(
        'IMPORT_NOT_ALLOWED',
        `cannot import ${JSON.stringify(specifier)}: skills can import only other skills, e.g. import { f } from 'skill:other_skill'`,
        statement,
      );
    }
    if (!this.#imports.includes(name)) this.#imports.push(name);
    return name;
  }

  /** A name the skill's text never mentions, so generated bindings cannot clash with its own. */
  #fresh(base: string, numbered = true): string {
    let name = numbered ? `${base}${++this.#counter}` : base;
    while (this.#js.includes(name)) name = `${base}${++this.#counter}`;
    return name;
  }

  #blank(start: number, end: number): void {
    this.#edits.push({ start, end, text: blankOut(this.#js.slice(start, end)) });
  }

  /** Replace text, keeping the lines it spanned and, when it fits, the columns after it. */
  #replace(start: number, end: number, text: string): void {
    const original = this.#js.slice(start, end);
    const breaks = original.replace(/[^\r\n\u2028\u2029]/g, '');
    const padded = breaks === '' && text.length < original.length ? text.padEnd(original.length) : text + breaks;
    this.#edits.push({ start, end, text: padded });
  }

  #assemble(): string {
    const edits = [...this.#edits].sort((a, b) => a.start - b.start || a.end - b.end);
    let out = '"use strict";' + this.#prologue.join(' ');
    let at = 0;
    for (const edit of edits) {
      out += this.#js.slice(at, edit.start) + edit.text;
      at = edit.end;
    }
    out += this.#js.slice(at);
    const spread = this.#stars.map((m) => `...${this.#spreadHelper}(${m}), `).join('');
    let tail = `\n;return { ${spread}${this.#entries.join(', ')} };`;
    if (this.#stars.length > 0) tail += ` function ${this.#spreadHelper}(m) { const { default: _, ...rest } = m; return rest; }`;
    if (this.#needsCheck) {
      tail +=
        ` function ${this.#checkHelper}(m, skill, names) { for (const n of names) if (!(n in Object(m))) ` +
        `throw new SyntaxError("The skill '" + skill + "' does not provide an export named '" + n + "' (it exports: " + ` +
        `(Object.keys(Object(m)).join(", ") || "nothing") + ")"); return m; }`;
    }
    return out + tail;
  }

  #error(code: 'IMPORT_NOT_ALLOWED', message: string, node: Node): SkillError {
    const line = node.loc?.start.line;
    const column = node.loc ? node.loc.start.column + 1 : undefined;
    const where = line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
    return new SkillError(code, `${this.#label}: ${message}${where}`, line === undefined ? {} : column === undefined ? { line } : { line, column });
  }
}

function declarationOf(
  statement: Statement | ModuleDeclaration,
): Statement | ModuleDeclaration | AnonymousFunctionDeclaration | AnonymousClassDeclaration | null {
  if (statement.type === 'ExportNamedDeclaration') return statement.declaration ?? null;
  if (statement.type === 'ExportDefaultDeclaration') {
    const d = statement.declaration;
    return d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration' ? d : null;
  }
  return statement;
}

function patternNames(pattern: Pattern): string[] {
  switch (pattern.type) {
    case 'Identifier':
      return [pattern.name];
    case 'ObjectPattern':
      return pattern.properties.flatMap((p) => (p.type === 'RestElement' ? patternNames(p.argument) : patternNames(p.value)));
    case 'ArrayPattern':
      return pattern.elements.flatMap((e) => (e ? patternNames(e) : []));
    case 'RestElement':
      return patternNames(pattern.argument);
    case 'AssignmentPattern':
      return patternNames(pattern.left);
    default:
      return [];
  }
}

function moduleExportName(node: Node & { name?: unknown; value?: unknown }): string {
  if (typeof node.name === 'string') return node.name;
  return String(node.value);
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** Every character but line terminators becomes a space. */
export function blankOut(text: string): string {
  return text.replace(/[^\r\n\u2028\u2029]/g, ' ');
}

/** Visit every node of an acorn tree. */
export function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'range') continue;
    const value: unknown = (node as unknown as Record<string, unknown>)[key];
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) walk(item, visit);
    } else if (isNode(value)) {
      walk(value, visit);
    }
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
