// Turns a tool's input and output JSON Schema into a TypeScript signature with doc comments,
// the form a model reads best when it is about to write code against the tool.
import type { JsonSchema, ToolEntry } from './catalog-types.js';

/** Nesting beyond this is shown as `unknown`: signatures are for reading, not for proofs. */
const MAX_DEPTH = 12;
/** Target line width of the generated text. */
const WIDTH = 100;

type TsType =
  | { kind: 'keyword'; text: string }
  | { kind: 'union'; members: TsType[] }
  | { kind: 'intersection'; members: TsType[] }
  | { kind: 'array'; element: TsType }
  | { kind: 'tuple'; elements: TsType[]; rest: TsType | null }
  | { kind: 'object'; props: TsProp[]; index: TsType | null };

interface TsProp {
  key: string;
  optional: boolean;
  type: TsType;
  doc: string | null;
}

const keyword = (text: string): TsType => ({ kind: 'keyword', text });
const UNKNOWN = keyword('unknown');
const NEVER = keyword('never');
const isUnknown = (t: TsType): boolean => t.kind === 'keyword' && t.text === 'unknown';

const RESERVED = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if import in instanceof new null return super switch this throw true try typeof var void ' +
    'while with yield let static implements interface package private protected public await').split(' '),
);

export function isIdentifier(name: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

/** A usable function name for a tool name ('get-issue' -> 'get_issue', 'delete' -> 'delete_'). */
export function toIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (!/^[A-Za-z_$]/.test(id)) id = `_${id}`;
  return RESERVED.has(id) ? `${id}_` : id;
}

/** 'tools' + 'brave-search' -> 'tools["brave-search"]'; 'tools' + 'github' -> 'tools.github'. */
export function memberAccess(base: string, key: string): string {
  return isIdentifier(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

function propertyKey(key: string): string {
  return isIdentifier(key) ? key : JSON.stringify(key);
}

const asSchema = (value: unknown): JsonSchema | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : null;

function literal(value: unknown): TsType {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return keyword(JSON.stringify(value));
  return UNKNOWN;
}

function union(members: TsType[]): TsType {
  const flat: TsType[] = [];
  const seen = new Set<string>();
  for (const member of members.flatMap((m) => (m.kind === 'union' ? m.members : [m]))) {
    if (isUnknown(member)) return UNKNOWN;
    if (member.kind === 'keyword' && member.text === 'never') continue;
    const text = flatText(member);
    if (!seen.has(text)) {
      seen.add(text);
      flat.push(member);
    }
  }
  if (flat.length === 0) return NEVER;
  return flat.length === 1 ? (flat[0] as TsType) : { kind: 'union', members: flat };
}

function intersection(members: TsType[]): TsType {
  const useful = members.flatMap((m) => (m.kind === 'intersection' ? m.members : [m])).filter((m) => !isUnknown(m));
  if (useful.length === 0) return UNKNOWN;
  return useful.length === 1 ? (useful[0] as TsType) : { kind: 'intersection', members: useful };
}

/** Text of a property's doc comment: its description (or title) and default. */
function docOf(schema: JsonSchema | null): string | null {
  if (!schema) return null;
  const description = typeof schema['description'] === 'string' ? schema['description'].trim() : '';
  let doc = description;
  if ('default' in schema && schema['default'] !== undefined && schema['default'] !== null && !/\bdefault/i.test(doc)) {
    const value = JSON.stringify(schema['default']);
    if (value !== undefined && value.length <= 60) doc = doc ? `${doc} (default: ${value})` : `Default: ${value}`;
  }
  // Titles are left out: generated ones ('Repo Path') repeat the property name.
  return doc || null;
}

class Converter {
  readonly #root: JsonSchema;
  readonly #refs: string[] = [];

  constructor(root: JsonSchema) {
    this.#root = root;
  }

  convert(value: unknown, depth: number): TsType {
    if (value === false) return NEVER;
    const schema = asSchema(value);
    if (!schema || depth > MAX_DEPTH) return UNKNOWN;
    const ref = schema['$ref'];
    if (typeof ref === 'string') return this.#convertRef(ref, depth);

    const parts: TsType[] = [];
    const base = this.#base(schema, depth);
    if (base) parts.push(base);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const list = schema[key];
      if (!Array.isArray(list) || list.length === 0) continue;
      const members = list.map((member) => this.convert(member, depth + 1));
      // Branches that only add constraints (`{required: [...]}`) say nothing about the type.
      if (members.some(isUnknown) && base) continue;
      parts.push(union(members));
    }
    const all = schema['allOf'];
    if (Array.isArray(all)) for (const member of all) parts.push(this.convert(member, depth + 1));
    let type = intersection(parts);
    if (schema['nullable'] === true && !isUnknown(type)) type = union([type, keyword('null')]);
    return type;
  }

  #convertRef(ref: string, depth: number): TsType {
    if (this.#refs.includes(ref)) return UNKNOWN; // a cycle: stop, the doc comment names the type
    const target = this.#resolve(ref);
    if (target === undefined) return UNKNOWN;
    this.#refs.push(ref);
    try {
      return this.convert(target, depth + 1);
    } finally {
      this.#refs.pop();
    }
  }

  #resolve(ref: string): unknown {
    if (ref === '#') return this.#root;
    if (!ref.startsWith('#/')) return undefined; // remote references are not fetched
    let node: unknown = this.#root;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      const holder = asSchema(node);
      if (!holder || !(key in holder)) return undefined;
      node = holder[key];
    }
    return node;
  }

  #base(schema: JsonSchema, depth: number): TsType | null {
    if ('const' in schema) return literal(schema['const']);
    const enumValues = schema['enum'];
    if (Array.isArray(enumValues)) return union(enumValues.map(literal));
    const type = schema['type'];
    const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type.filter((t) => typeof t === 'string') : [];
    if (types.length > 0) return union(types.map((t) => this.#ofType(t as string, schema, depth)));
    if (['properties', 'additionalProperties', 'patternProperties'].some((k) => k in schema)) {
      return this.#object(schema, depth);
    }
    if ('items' in schema || 'prefixItems' in schema) return this.#array(schema, depth);
    return null;
  }

  #ofType(type: string, schema: JsonSchema, depth: number): TsType {
    switch (type) {
      case 'string':
        return keyword('string');
      case 'number':
      case 'integer':
        return keyword('number');
      case 'boolean':
        return keyword('boolean');
      case 'null':
        return keyword('null');
      case 'array':
        return this.#array(schema, depth);
      case 'object':
        return this.#object(schema, depth);
      default:
        return UNKNOWN;
    }
  }

  #array(schema: JsonSchema, depth: number): TsType {
    const tuple = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : null;
    if (tuple) {
      const restSchema = Array.isArray(schema['prefixItems']) ? schema['items'] : schema['additionalItems'];
      const rest = restSchema === false ? null : this.convert(restSchema ?? true, depth + 1);
      return { kind: 'tuple', elements: tuple.map((item) => this.convert(item, depth + 1)), rest };
    }
    return { kind: 'array', element: 'items' in schema ? this.convert(schema['items'], depth + 1) : UNKNOWN };
  }

  #object(schema: JsonSchema, depth: number): TsType {
    const properties = asSchema(schema['properties']) ?? {};
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    const props: TsProp[] = Object.entries(properties).map(([key, value]) => ({
      key,
      optional: !required.has(key),
      type: this.convert(value, depth + 1),
      doc: docOf(asSchema(value)),
    }));
    const extra = schema['additionalProperties'];
    const patterns = asSchema(schema['patternProperties']);
    let index: TsType | null = null;
    if (asSchema(extra)) index = this.convert(extra, depth + 1);
    else if (patterns && Object.keys(patterns).length > 0) {
      index = union(Object.values(patterns).map((p) => this.convert(p, depth + 1)));
    } else if (extra === true || (extra === undefined && !('properties' in schema))) {
      // A free-form object; declared-but-empty `properties` reads as "no arguments" instead.
      if (props.length === 0) index = UNKNOWN;
    }
    return { kind: 'object', props, index };
  }
}

// ---- printing ----

const needsParens = (t: TsType, inside: 'array' | 'intersection'): boolean =>
  t.kind === 'union' || (inside === 'array' && t.kind === 'intersection');

function docInline(doc: string): string {
  return `/** ${doc.replace(/\s*\n\s*/g, ' ').replaceAll('*/', '*\\/')} */ `;
}

function flatText(t: TsType): string {
  switch (t.kind) {
    case 'keyword':
      return t.text;
    case 'union':
      return t.members.map(flatText).join(' | ');
    case 'intersection':
      return t.members.map((m) => (needsParens(m, 'intersection') ? `(${flatText(m)})` : flatText(m))).join(' & ');
    case 'array':
      return needsParens(t.element, 'array') ? `(${flatText(t.element)})[]` : `${flatText(t.element)}[]`;
    case 'tuple': {
      const items = t.elements.map(flatText);
      if (t.rest) items.push(`...${flatText({ kind: 'array', element: t.rest })}`);
      return `[${items.join(', ')}]`;
    }
    case 'object': {
      const members = t.props.map((p) => `${p.doc ? docInline(p.doc) : ''}${propertyKey(p.key)}${p.optional ? '?' : ''}: ${flatText(p.type)}`);
      const index = t.index && (isUnknown(t.index) || t.props.length === 0) ? `[key: string]: ${flatText(t.index)}` : null;
      if (index) members.push(index);
      const body = members.length === 0 ? '{}' : `{ ${members.join('; ')} }`;
      // A typed index signature must cover every property, so it goes in its own member.
      if (t.index && !index) return `${body} & { [key: string]: ${flatText(t.index)} }`;
      return body;
    }
  }
}

function docBlock(doc: string, indent: string): string {
  const lines = wrap(doc, WIDTH - indent.length - 3);
  if (lines.length === 1 && (lines[0] as string).length + indent.length + 7 <= WIDTH) {
    return `${indent}/** ${(lines[0] as string).replaceAll('*/', '*\\/')} */\n`;
  }
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l.replaceAll('*/', '*\\/')}` : ''}`).join('\n')}\n${indent} */\n`;
}

/** Word-wrap each paragraph line of a text to `width` columns. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.trim().split('\n')) {
    let line = '';
    for (const word of paragraph.trim().split(/\s+/)) {
      if (line && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    out.push(line);
  }
  return out;
}

/** Parentheses around a type; a multi-line union (it starts with a newline) closes on its own line. */
function parens(inner: string, pad: string): string {
  return inner.startsWith('\n') ? `(${inner}\n${pad})` : `(${inner})`;
}

function prettyText(t: TsType, indent: number): string {
  const flat = flatText(t);
  if (indent + flat.length <= WIDTH) return flat;
  const pad = ' '.repeat(indent);
  switch (t.kind) {
    case 'keyword':
      return flat;
    case 'union':
      // One member a line, each led by `|`, as prettier prints long unions.
      return t.members.map((m) => `\n${pad}  | ${prettyText(m, indent + 4)}`).join('');
    case 'intersection':
      return t.members.map((m) => (needsParens(m, 'intersection') ? parens(prettyText(m, indent), pad) : prettyText(m, indent))).join(' & ');
    case 'array':
      return needsParens(t.element, 'array') ? `${parens(prettyText(t.element, indent), pad)}[]` : `${prettyText(t.element, indent)}[]`;
    case 'tuple': {
      const items = t.elements.map((e) => `${pad}  ${prettyText(e, indent + 2)},`);
      if (t.rest) items.push(`${pad}  ...${prettyText({ kind: 'array', element: t.rest }, indent + 5)},`);
      return `[\n${items.join('\n')}\n${pad}]`;
    }
    case 'object': {
      const inner = `${pad}  `;
      const lines = t.props.map(
        (p) => `${p.doc ? docBlock(p.doc, inner) : ''}${inner}${propertyKey(p.key)}${p.optional ? '?' : ''}: ${prettyText(p.type, indent + 2)};`,
      );
      const typedIndex = t.index && !isUnknown(t.index) && t.props.length > 0;
      if (t.index && !typedIndex) lines.push(`${inner}[key: string]: ${prettyText(t.index, indent + 2)};`);
      const body = `{\n${lines.join('\n')}\n${pad}}`;
      return typedIndex && t.index ? `${body} & { [key: string]: ${prettyText(t.index, indent)} }` : body;
    }
  }
}

/** The TypeScript type of a JSON Schema, as text ('{ path: string; head?: number }'). */
export function jsonSchemaToType(schema: unknown, indent = 0): string {
  const root = asSchema(schema);
  if (!root) return schema === false ? 'never' : 'unknown';
  return prettyText(new Converter(root).convert(root, 0), indent);
}

function isOptionalArgs(schema: JsonSchema): boolean {
  const required = schema['required'];
  return schema['type'] === 'object' && (!Array.isArray(required) || required.length === 0);
}

export type SignatureSource = Pick<ToolEntry, 'name' | 'description' | 'input_schema'> & Partial<Pick<ToolEntry, 'output_schema'>>;

interface SignatureParts {
  doc: string;
  params: string;
  returns: string;
}

/**
 * The pieces of a tool's signature. Two catalog-only schema keywords shape built-in sandbox
 * functions: `"x-positional": true` on input_schema makes each property a positional
 * parameter (in order), and `"x-sync": true` on input_schema drops the Promise.
 */
export function signatureParts(entry: SignatureSource, indent = 0): SignatureParts {
  const input = entry.input_schema;
  const positional = input['x-positional'] === true;
  let doc = entry.description.trim();
  let params: string;
  if (positional) {
    const properties = asSchema(input['properties']) ?? {};
    const required = new Set(Array.isArray(input['required']) ? input['required'] : []);
    const keys = Object.keys(properties);
    const converter = new Converter(input);
    const docs: string[] = [];
    params = keys
      .map((key, i) => {
        const optional = keys.slice(i).every((k) => !required.has(k));
        const prop = properties[key];
        const text = docOf(asSchema(prop));
        if (text) docs.push(`@param ${toIdentifier(key)} ${text}`);
        return `${toIdentifier(key)}${optional ? '?' : ''}: ${prettyText(converter.convert(prop, 1), indent)}`;
      })
      .join(', ');
    if (docs.length > 0) doc = `${doc}\n${docs.join('\n')}`;
  } else {
    params = `args${isOptionalArgs(input) ? '?' : ''}: ${jsonSchemaToType(input, indent)}`;
  }
  const output = entry.output_schema ? jsonSchemaToType(entry.output_schema, indent) : 'unknown';
  const returns = input['x-sync'] === true ? output : `Promise<${output}>`;
  return { doc, params, returns };
}

/**
 * The TypeScript signature of a tool, with its description as a doc comment:
 * `/** Read a file. *\/\nfunction read_file(args: { path: string }): Promise<{ content: string }>;`
 */
export function schemaToTypeScript(entry: SignatureSource): string {
  const { doc, params, returns } = signatureParts(entry);
  return `${doc ? docBlock(doc, '') : ''}function ${toIdentifier(entry.name)}(${params}): ${returns};`;
}

export { docBlock as renderDocComment };
