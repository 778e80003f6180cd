// Turns an MCP tool result into the value sandbox code receives from `tools.SERVER.TOOL(args)`:
// structured content when the tool gives it, parsed JSON when its text is JSON, the text
// otherwise; other blocks (images, audio, resources) become plain described objects; a result
// with `isError: true` becomes an UpstreamError naming server and tool.
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { UpstreamError, qualifiedName } from './upstream-error.js';

/** Characters of a tool's error text kept in the thrown message. */
const MAX_ERROR_TEXT_CHARS = 4_000;

export type DescribedBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; mimeType: string; bytes: number; data: string }
  | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string }
  | { type: 'resource'; uri: string; mimeType?: string; text?: string; blob?: string; bytes?: number }
  | { type: string; [key: string]: unknown };

/** Decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function describeBlock(block: ContentBlock): DescribedBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, mimeType: block.mimeType, bytes: base64Bytes(block.data), data: block.data };
    case 'resource_link': {
      const link: DescribedBlock = { type: 'resource_link', uri: block.uri, name: block.name };
      if (block.title !== undefined) link.title = block.title;
      if (block.description !== undefined) link.description = block.description;
      if (block.mimeType !== undefined) link.mimeType = block.mimeType;
      return link;
    }
    case 'resource': {
      const resource = block.resource;
      const out: DescribedBlock = { type: 'resource', uri: resource.uri };
      if (resource.mimeType !== undefined) out.mimeType = resource.mimeType;
      if ('text' in resource && typeof resource.text === 'string') out.text = resource.text;
      if ('blob' in resource && typeof resource.blob === 'string') {
        out.blob = resource.blob;
        out.bytes = base64Bytes(resource.blob);
      }
      return out;
    }
    default:
      return { ...(block as { type: string }) };
  }
}

function textOf(content: readonly ContentBlock[]): string {
  return content
    .filter((block): block is Extract<ContentBlock, { type: 'text' }> => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** The parsed value when `text` is a JSON document, else `undefined`. */
function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** The value a call resolves to; throws UpstreamError 'TOOL_ERROR' for `isError: true`. */
export function convertToolResult(server: string, tool: string, result: CallToolResult): unknown {
  const content = result.content ?? [];
  if (result.isError === true) {
    let text = textOf(content);
    if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
    if (text.length > MAX_ERROR_TEXT_CHARS) {
      text = `${text.slice(0, MAX_ERROR_TEXT_CHARS)}… (${text.length - MAX_ERROR_TEXT_CHARS} more characters)`;
    }
    throw new UpstreamError('TOOL_ERROR', `${qualifiedName(server, tool)} failed: ${text === '' ? '(the tool gave no message)' : text}`, {
      server,
      tool,
    });
  }
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (content.length === 0) return null;
  if (content.every((block) => block.type === 'text')) {
    const text = textOf(content);
    const parsed = parseJson(text);
    return parsed === undefined ? text : parsed;
  }
  return content.map(describeBlock);
}
