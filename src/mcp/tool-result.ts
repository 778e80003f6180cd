// Tool results in the one shape every tool uses: JSON as structuredContent plus the same JSON as
// one text block; failures as `isError: true` with a message saying what was wrong and what to do
// (tools throw DaemonError, util/daemon-error.ts; define-tool.ts adapts it).

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export function jsonResult(value: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value,
    ...(isError ? { isError: true } : {}),
  };
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
