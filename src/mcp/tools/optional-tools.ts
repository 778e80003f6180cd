// The tools of subsystems owned elsewhere (catalog, skills, PII), registered only when the
// composition root wired that subsystem: tools/list never shows a tool that cannot work.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from '../define-tool.js';
import { registerPiiTools } from './pii-tools.js';

export function registerOptionalTools(server: McpServer, ctx: ToolContext): void {
  const { pii } = ctx.services;
  if (pii) registerPiiTools(server, ctx, pii);
}
