// Turns a tool's input and output JSON Schema into a TypeScript signature with doc comments,
// the form a model reads best when it is about to write code against the tool. Two styles: the
// whole signature (get_tool_definition format "full", the servers/ files) and a compact one
// (format "typescript") whose cuts are all reachable in the whole one and say so.
import type { JsonSchema, ToolEntry } from './catalog-types.js';
import { docBlock, flatText, intersection, isIdentifier, isUnknown, keyword, NEVER, prettyText, union, UNKNOWN } from './ts-type-text.js';
import type { TsProp, TsType } from './ts-type-text.js';

export { isIdentifier } from './ts-type-text.js';

/** Nesting beyond this is shown as `unknown`: signatures are for reading, not for proofs. */
const MAX_DEPTH = 12;

/** What a signature keeps; `null` keeps all of it. */
export interface SignatureStyle {
  /** Longest tool description, characters: the sentences that fit, else the first one cut. */
  readonly descriptionChars: number | null;
  /** Longest property doc comment, characters (its first sentence, cut at a word). */
  readonly docChars: number | null;
  /** Object types nested deeper than this (the arguments object is 0) print as `object`. */
  readonly objectDepth: number | null;
  /** Enums with more values than this show the first ones and how many more. */
  readonly enumValues: number | null;
  /** Target line width of the generated text. */
  readonly width: number;
}

export const FULL_STYLE: SignatureStyle = Object.freeze({ descriptionChars: null, docChars: null, objectDepth: null, enumValues: null, width: 100 });
/** get_tool_definition's default in the minimal profile: about a third of the tokens of FULL_STYLE on large tools. */
export const COMPACT_STYLE: SignatureStyle = Object.freeze({ descriptionChars: 240, docChars: 90, objectDepth: 2, enumValues: 6, width: 100 });

/** The line a compact signature ends with when it left something out. */
export const SHORTENED_NOTE = '// Shortened: get_tool_definition with format "schema" or "full" has every detail.';

/** `text` as whole sentences within `max` characters, else its first sentence cut at a word, with "…". */
export function shorten(text: string, max: number | null): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (max === null || flat.length <= max) return max === null ? text.trim() : flat;
  const sentences = flat.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/g) ?? [flat];
  let kept = '';
  for (const s of sentences) {
    const next = `${kept}${s}`;
    if (next.trim().length > max) break;
    kept = next;
  }
  if (kept.trim() !== '') return `${kept.trim()} …`;
  const cut = flat.lastIndexOf(' ', max - 1);
  return `${flat.slice(0, cut > max / 2 ? cut : max - 1)}…`;
}

const RESERVED = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if import in instanceof new null return super switch this throw true try typeof var void ' +
    'while with yield let static implements interface package private protected public await').split(' '),
);

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

const asSchema = (value: unknown): JsonSchema | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : null;

function literal(value: unknown): TsType {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return keyword(JSON.stringify(value));
  return UNKNOWN;
}

/** Text of a property's doc comment: its description (or title) and default. */
function docOf(schema: JsonSchema | null, style: SignatureStyle = FULL_STYLE): string | null {
  if (!schema) return null;
  const description = typeof schema['description'] === 'string' ? schema['description'].trim() : '';
  let doc = shorten(description, style.docChars);
  if ('default' in schema && schema['default'] !== undefined && schema['default'] !== null && !/\bdefault/i.test(doc)) {
    const value = JSON.stringify(schema['default']);
    if (value !== undefined && value.length <= 60) doc = doc ? `${doc} (default: ${value})` : `Default: ${value}`;
  }
  // Titles are left out: generated ones ('Repo Path') repeat the property name.
  return doc || null;
}

class Converter {
  readonly #root: JsonSchema;
  readonly #style: SignatureStyle;
  readonly #refs: string[] = [];
  /** How many object types enclose the one being converted. */
  #objects = 0;
  /** Whether the style left anything out (the signature then says where the rest is). */
  shortened = false;

  constructor(root: JsonSchema, style: SignatureStyle = FULL_STYLE) {
    this.#root = root;
    this.#style = style;
  }

  /** A property's doc comment in this style, noting a cut. */
  doc(schema: JsonSchema | null): string | null {
    const doc = docOf(schema, this.#style);
    if (doc?.includes('…') && !String(schema?.['description'] ?? '').includes('…')) this.shortened = true;
    return doc;
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
    if (Array.isArray(enumValues)) {
      const max = this.#style.enumValues;
      if (max === null || enumValues.length <= max) return union(enumValues.map(literal));
      // The first values, and a comment (valid TypeScript) saying how many are left out.
      this.shortened = true;
      const shown = enumValues.slice(0, max - 1).map(literal);
      const last = flatText(literal(enumValues[max - 1]));
      return union([...shown, keyword(`${last} /* +${enumValues.length - max} more */`)]);
    }
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
    if (this.#style.objectDepth !== null && this.#objects > this.#style.objectDepth) {
      if (Object.keys(properties).length > 0) this.shortened = true;
      return keyword('object');
    }
    this.#objects++;
    try {
      return this.#objectBody(schema, properties, depth);
    } finally {
      this.#objects--;
    }
  }

  #objectBody(schema: JsonSchema, properties: JsonSchema, depth: number): TsType {
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    const props: TsProp[] = Object.entries(properties).map(([key, value]) => ({
      key,
      optional: !required.has(key),
      type: this.convert(value, depth + 1),
      doc: this.doc(asSchema(value)),
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

/** The TypeScript type of a JSON Schema, as text ('{ path: string; head?: number }'). */
export function jsonSchemaToType(schema: unknown, indent = 0): string {
  const root = asSchema(schema);
  if (!root) return schema === false ? 'never' : 'unknown';
  return prettyText(new Converter(root).convert(root, 0), indent, FULL_STYLE.width);
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
  /** The style left something out. */
  shortened: boolean;
}

/** A schema's type in `style`, and whether the style cut anything. */
function typeIn(schema: unknown, style: SignatureStyle, indent: number): { text: string; shortened: boolean } {
  const root = asSchema(schema);
  if (!root) return { text: schema === false ? 'never' : 'unknown', shortened: false };
  const converter = new Converter(root, style);
  const text = prettyText(converter.convert(root, 0), indent, style.width);
  return { text, shortened: converter.shortened };
}

/**
 * The pieces of a tool's signature. Two catalog-only schema keywords shape built-in sandbox
 * functions: `"x-positional": true` on input_schema makes each property a positional
 * parameter (in order), and `"x-sync": true` on input_schema drops the Promise.
 */
export function signatureParts(entry: SignatureSource, indent = 0, style: SignatureStyle = FULL_STYLE): SignatureParts {
  const input = entry.input_schema;
  const positional = input['x-positional'] === true;
  let doc = shorten(entry.description, style.descriptionChars);
  let shortened = doc.includes('…') && !entry.description.includes('…');
  let params: string;
  if (positional) {
    const properties = asSchema(input['properties']) ?? {};
    const required = new Set(Array.isArray(input['required']) ? input['required'] : []);
    const keys = Object.keys(properties);
    const converter = new Converter(input, style);
    const docs: string[] = [];
    params = keys
      .map((key, i) => {
        const optional = keys.slice(i).every((k) => !required.has(k));
        const prop = properties[key];
        const text = converter.doc(asSchema(prop));
        if (text) docs.push(`@param ${toIdentifier(key)} ${text}`);
        return `${toIdentifier(key)}${optional ? '?' : ''}: ${prettyText(converter.convert(prop, 1), indent, style.width)}`;
      })
      .join(', ');
    if (docs.length > 0) doc = `${doc}\n${docs.join('\n')}`;
    shortened ||= converter.shortened;
  } else {
    const args = typeIn(input, style, indent);
    params = `args${isOptionalArgs(input) ? '?' : ''}: ${args.text}`;
    shortened ||= args.shortened;
  }
  const output = entry.output_schema ? typeIn(entry.output_schema, style, indent) : { text: 'unknown', shortened: false };
  const returns = input['x-sync'] === true ? output.text : `Promise<${output.text}>`;
  return { doc, params, returns, shortened: shortened || output.shortened };
}

/**
 * The TypeScript signature of a tool, with its description as a doc comment:
 * `/** Read a file. *\/\nfunction read_file(args: { path: string }): Promise<{ content: string }>;`
 * In a style that left something out, a last line says where the whole of it is.
 */
export function schemaToTypeScript(entry: SignatureSource, style: SignatureStyle = FULL_STYLE): string {
  const { doc, params, returns, shortened } = signatureParts(entry, 0, style);
  const signature = `${doc ? docBlock(doc, '', style.width) : ''}function ${toIdentifier(entry.name)}(${params}): ${returns};`;
  return shortened ? `${signature}\n${SHORTENED_NOTE}` : signature;
}

/** A doc comment block, as the signatures print them (the servers/ files use it too). */
export function renderDocComment(doc: string, indent: string): string {
  return docBlock(doc, indent, FULL_STYLE.width);
}
