// The tools of subsystems owned elsewhere (catalog, skills, PII), registered only when the
// composition root wired that subsystem: tools/list never shows a tool that cannot work.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from '../define-tool.js';

export function registerOptionalTools(_server: McpServer, _ctx: ToolContext): void {
  // filled in as src/catalog, src/skills and src/pii land
}
