// write_workspace_file, read_workspace_file, list_workspace_files, delete_workspace_file: the
// seed's names and arguments, confined to the calling agent's workspace namespace.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { grantedWorkspace } from '../permissions.js';
import { args, number, text } from '../schema-helpers.js';

export function registerWorkspaceTools(server: McpServer, ctx: ToolContext): void {
  const { services, session } = ctx;
  const view = (action: string, needs: 'read' | 'read-write') => grantedWorkspace(services.workspace, session.agent, action, needs);

  defineTool(
    server,
    ctx,
    'write_workspace_file',
    {
      title: 'Write workspace file',
      description:
        'Write a text file in your workspace (replaced if it exists); code reads it with read_file(filename).',
      input: args('write_workspace_file', {
        filename: text('filename', 'e.g. "data/input.json"'),
        content: text('content', 'text', { allowEmpty: true }),
      }),
      // filename and bytes come too; the listing names the seed's fields.
      output: z.looseObject({ success: z.boolean(), message: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ filename, content }) => {
      const { bytes } = await view('write_workspace_file', 'read-write').writeFile(filename, content);
      return { result: { success: true, message: `Written ${bytes} bytes to ${filename}`, filename, bytes } };
    },
  );

  defineTool(
    server,
    ctx,
    'read_workspace_file',
    {
      title: 'Read workspace file',
      description: 'Read a text file from your workspace; offset and length (characters) read one page of a big file.',
      input: args('read_workspace_file', {
        filename: text('filename', 'path in your workspace'),
        offset: number('offset', 'first character to read', { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true, unit: 'characters' }).optional(),
        length: number('length', 'characters to read', { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true, unit: 'characters' }).optional(),
      }),
      output: z.looseObject({ success: z.boolean(), filename: z.string(), content: z.string(), size: z.number() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ filename, offset, length }) => {
      const { content, size } = await view('read_workspace_file', 'read').readFile(filename);
      if (offset === undefined && length === undefined) {
        return { result: { success: true, filename, content: await services.boundary.outgoingText(content, session), size } };
      }
      const p = page(content, offset ?? 0, length);
      return {
        result: {
          success: true,
          filename,
          content: await services.boundary.outgoingText(p.text, session),
          size,
          offset: p.offset,
          total_chars: content.length,
          ...(p.next < content.length ? { next_offset: p.next } : {}),
        },
      };
    },
  );

  defineTool(
    server,
    ctx,
    'list_workspace_files',
    {
      title: 'List workspace files',
      description: 'List your workspace files recursively.',
      input: args('list_workspace_files', {
        subpath: text('subpath', 'folder').default('.'),
      }),
      output: z.looseObject({ success: z.boolean(), path: z.string(), files: z.array(z.string()), count: z.number() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ subpath }) => {
      const files = await view('list_workspace_files', 'read').listFiles(subpath);
      return { result: { success: true, path: subpath, files, count: files.length } };
    },
  );

  defineTool(
    server,
    ctx,
    'delete_workspace_file',
    {
      title: 'Delete workspace file',
      description: 'Delete a file from your workspace.',
      input: args('delete_workspace_file', { filename: text('filename', 'path in your workspace') }),
      output: z.looseObject({ success: z.boolean(), message: z.string().optional() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ filename }) => {
      await view('delete_workspace_file', 'read-write').deleteFile(filename);
      return { result: { success: true, message: `deleted ${filename}` } };
    },
  );
}

/**
 * Characters [offset, offset + length) of the text, never splitting a surrogate pair (a page that
 * would end inside one ends before it; the next page starts with it).
 */
export function page(content: string, offset: number, length: number | undefined): { text: string; offset: number; next: number } {
  let start = Math.min(offset, content.length);
  if (start > 0 && start < content.length && isLowSurrogate(content.charCodeAt(start)) && isHighSurrogate(content.charCodeAt(start - 1))) start--;
  let end = length === undefined ? content.length : Math.min(content.length, start + length);
  if (end > start + 1 && end < content.length && isHighSurrogate(content.charCodeAt(end - 1))) end--;
  return { text: content.slice(start, end), offset: start, next: end };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
