// write_workspace_file, read_workspace_file, list_workspace_files, delete_workspace_file: the
// seed's names and arguments, confined to the calling agent's workspace namespace.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { requireAccess } from '../permissions.js';
import { args, text } from '../schema-helpers.js';

export function registerWorkspaceTools(server: McpServer, ctx: ToolContext): void {
  const { services, session } = ctx;
  const view = () => services.workspace.namespace(session.agent.workspaceNamespace);

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
      requireAccess(session.agent, 'workspace', 'read-write', 'write_workspace_file');
      const { bytes } = await view().writeFile(filename, content);
      return { result: { success: true, message: `Written ${bytes} bytes to ${filename}`, filename, bytes } };
    },
  );

  defineTool(
    server,
    ctx,
    'read_workspace_file',
    {
      title: 'Read workspace file',
      description: 'Read a text file from your workspace.',
      input: args('read_workspace_file', { filename: text('filename', 'path in your workspace') }),
      output: z.looseObject({ success: z.boolean(), filename: z.string(), content: z.string(), size: z.number() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ filename }) => {
      requireAccess(session.agent, 'workspace', 'read', 'read_workspace_file');
      const { content, size } = await view().readFile(filename);
      return { result: { success: true, filename, content: await services.boundary.outgoingText(content, session), size } };
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
      requireAccess(session.agent, 'workspace', 'read', 'list_workspace_files');
      const files = await view().listFiles(subpath);
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
      requireAccess(session.agent, 'workspace', 'read-write', 'delete_workspace_file');
      await view().deleteFile(filename);
      return { result: { success: true, message: `deleted ${filename}` } };
    },
  );
}
