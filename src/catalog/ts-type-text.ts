// TypeScript types as a small tree, and their printing: on one line when it fits the width, else
// one member a line as prettier would. Split from schema-to-typescript.ts, which builds the tree
// from JSON Schema; the printer knows nothing of schemas.

export type TsType =
  | { kind: 'keyword'; text: string }
  | { kind: 'union'; members: TsType[] }
  | { kind: 'intersection'; members: TsType[] }
  | { kind: 'array'; element: TsType }
  | { kind: 'tuple'; elements: TsType[]; rest: TsType | null }
  | { kind: 'object'; props: TsProp[]; index: TsType | null };

export interface TsProp {
  key: string;
  optional: boolean;
  type: TsType;
  doc: string | null;
}

export const keyword = (text: string): TsType => ({ kind: 'keyword', text });
export const UNKNOWN = keyword('unknown');
export const NEVER = keyword('never');
export const isUnknown = (t: TsType): boolean => t.kind === 'keyword' && t.text === 'unknown';

export function isIdentifier(name: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

function propertyKey(key: string): string {
  return isIdentifier(key) ? key : JSON.stringify(key);
}

export function union(members: TsType[]): TsType {
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

export function intersection(members: TsType[]): TsType {
  const useful = members.flatMap((m) => (m.kind === 'intersection' ? m.members : [m])).filter((m) => !isUnknown(m));
  if (useful.length === 0) return UNKNOWN;
  return useful.length === 1 ? (useful[0] as TsType) : { kind: 'intersection', members: useful };
}


const needsParens = (t: TsType, inside: 'array' | 'intersection'): boolean =>
  t.kind === 'union' || (inside === 'array' && t.kind === 'intersection');

function docInline(doc: string): string {
  return `/** ${doc.replace(/\s*\n\s*/g, ' ').replaceAll('*/', '*\\/')} */ `;
}

export function flatText(t: TsType): string {
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

export function docBlock(doc: string, indent: string, width: number): string {
  const lines = wrap(doc, width - indent.length - 3);
  if (lines.length === 1 && (lines[0] as string).length + indent.length + 7 <= width) {
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

export function prettyText(t: TsType, indent: number, width: number): string {
  const flat = flatText(t);
  if (indent + flat.length <= width) return flat;
  const pad = ' '.repeat(indent);
  switch (t.kind) {
    case 'keyword':
      return flat;
    case 'union':
      // One member a line, each led by `|`, as prettier prints long unions.
      return t.members.map((m) => `\n${pad}  | ${prettyText(m, indent + 4, width)}`).join('');
    case 'intersection':
      return t.members.map((m) => (needsParens(m, 'intersection') ? parens(prettyText(m, indent, width), pad) : prettyText(m, indent, width))).join(' & ');
    case 'array':
      return needsParens(t.element, 'array') ? `${parens(prettyText(t.element, indent, width), pad)}[]` : `${prettyText(t.element, indent, width)}[]`;
    case 'tuple': {
      const items = t.elements.map((e) => `${pad}  ${prettyText(e, indent + 2, width)},`);
      if (t.rest) items.push(`${pad}  ...${prettyText({ kind: 'array', element: t.rest }, indent + 5, width)},`);
      return `[\n${items.join('\n')}\n${pad}]`;
    }
    case 'object': {
      const inner = `${pad}  `;
      const lines = t.props.map(
        (p) => `${p.doc ? docBlock(p.doc, inner, width) : ''}${inner}${propertyKey(p.key)}${p.optional ? '?' : ''}: ${prettyText(p.type, indent + 2, width)};`,
      );
      const typedIndex = t.index && !isUnknown(t.index) && t.props.length > 0;
      if (t.index && !typedIndex) lines.push(`${inner}[key: string]: ${prettyText(t.index, indent + 2, width)};`);
      const body = `{\n${lines.join('\n')}\n${pad}}`;
      return typedIndex && t.index ? `${body} & { [key: string]: ${prettyText(t.index, indent, width)} }` : body;
    }
  }
}
