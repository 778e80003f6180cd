// The file-tree view of the catalog (Anthropic's "Code execution with MCP"): one generated,
// read-only `servers/SERVER/TOOL.ts` per tool and an `index.ts` per server, so an agent can
// explore tools with list_files/read_file as if they were modules.
import type { ToolEntry } from './catalog-types.js';
import { descriptionOnlySignature } from './seed-format.js';
import { jsonSchemaToType, memberAccess, renderDocComment, signatureParts, toIdentifier } from './schema-to-typescript.js';

/** Root folder of the tree, as the sandbox shows it. */
export const SERVERS_ROOT = 'servers';

/** A file-name-safe form of a tool or category name. */
export function safeFileName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_');
  return safe || '_';
}

/** Path of a tool's file in the tree: 'servers/github/create_issue.ts'. */
export function toolFilePath(entry: Pick<ToolEntry, 'category' | 'name'>): string {
  return `${SERVERS_ROOT}/${safeFileName(entry.category)}/${safeFileName(entry.name)}.ts`;
}

/** Path of a category's index: 'servers/github/index.ts'. */
export function serverIndexPath(category: string): string {
  return `${SERVERS_ROOT}/${safeFileName(category)}/index.ts`;
}

function pascalCase(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean);
  const joined = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  return /^[A-Za-z_]/.test(joined) ? joined : `T${joined}`;
}

/** The `tools.SERVER` object a tool is called through in the sandbox. */
function serverOf(entry: ToolEntry): string {
  return entry.source === 'upstream' ? entry.category : entry.mcp_server;
}

/**
 * Text of `servers/CATEGORY/TOOL.ts`: the tool's input and output types, its description as a
 * doc comment, and an exported async function that calls it the way sandbox code does.
 */
export function renderToolFile(entry: ToolEntry): string {
  const fn = toIdentifier(entry.name);
  const header = `// ${toolFilePath(entry)}: generated from the tool catalog (read-only).\n`;
  if (entry.source === 'catalog' && entry.mcp_server === 'sandbox') {
    const { doc, params, returns } = signatureParts(entry);
    return (
      `${header}// A global of the sandbox: call ${fn}(...) directly, no import needed.\n\n` +
      `${doc ? renderDocComment(doc, '') : ''}export declare function ${fn}(${params}): ${returns};\n`
    );
  }
  if (entry.source === 'skill') {
    return (
      `${header}// A saved skill: load its exports with import_skill(${JSON.stringify(entry.name)}).\n\n` +
      `${entry.description ? renderDocComment(entry.description, '') : ''}` +
      `export async function ${fn}(): Promise<Record<string, unknown>> {\n  return import_skill(${JSON.stringify(entry.name)});\n}\n`
    );
  }
  if (entry.description_only) {
    return `${header}${descriptionOnlySignature(entry)}\n${entry.description ? `\n${renderDocComment(entry.description, '')}` : ''}export {};\n`;
  }
  const type = pascalCase(entry.name);
  const input = jsonSchemaToType(entry.input_schema);
  const output = entry.output_schema ? jsonSchemaToType(entry.output_schema) : 'unknown';
  const declare = (name: string, text: string): string =>
    // An interface reads best; anything but one plain object literal stays a type alias.
    text.startsWith('{') && text.endsWith('}') && !/\}\s*&\s*\{/.test(text)
      ? `export interface ${name} ${text}\n`
      : `export type ${name} = ${text};\n`;
  const required = entry.input_schema['required'];
  const optional = !Array.isArray(required) || required.length === 0;
  const call = `${memberAccess(memberAccess('tools', serverOf(entry)), entry.name)}(input)`;
  return (
    `${header}// Call it from execute_code as ${memberAccess(memberAccess('tools', serverOf(entry)), entry.name)}(args).\n\n` +
    declare(`${type}Input`, input) +
    '\n' +
    declare(`${type}Output`, output) +
    '\n' +
    `${entry.description ? renderDocComment(entry.description, '') : ''}` +
    `export async function ${fn}(input${optional ? '?' : ''}: ${type}Input): Promise<${type}Output> {\n` +
    `  return ${call};\n}\n`
  );
}

/** Text of `servers/CATEGORY/index.ts`: one re-export per tool with its one-line summary. */
export function renderServerIndex(category: string, entries: readonly ToolEntry[], description?: string): string {
  const lines = [
    `// ${serverIndexPath(category)}: generated from the tool catalog (read-only).`,
    `// ${(description ?? `Tools of ${category}`).replace(/\.\s*$/, '')} (${entries.length} tool${entries.length === 1 ? '' : 's'}).`,
    '',
  ];
  for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const summary = entry.description.split('\n')[0]?.trim() ?? '';
    const short = summary.length > 110 ? `${summary.slice(0, 107)}...` : summary;
    if (short) lines.push(`/** ${short.replaceAll('*/', '*\\/')} */`);
    if (entry.description_only) {
      lines.push(`// ${entry.name}: description only (no input_schema), nothing to import; see ./${safeFileName(entry.name)}.ts`);
      continue;
    }
    lines.push(`export { ${toIdentifier(entry.name)} } from './${safeFileName(entry.name)}.js';`);
  }
  return `${lines.join('\n')}\n`;
}
