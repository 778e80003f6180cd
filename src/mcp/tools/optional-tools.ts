// The tools of subsystems owned elsewhere (catalog, skills, PII), registered only when the
// composition root wired that subsystem: tools/list never shows a tool that cannot work.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from '../define-tool.js';
import { registerCatalogTools } from './catalog-tools.js';
import { registerPiiTools } from './pii-tools.js';
import { registerSkillTools } from './skill-tools.js';

export function registerOptionalTools(server: McpServer, ctx: ToolContext): void {
  const { catalog, skills, pii } = ctx.services;
  if (catalog) registerCatalogTools(server, ctx, catalog);
  if (skills) registerSkillTools(server, ctx, skills);
  if (pii) registerPiiTools(server, ctx, pii);
}
