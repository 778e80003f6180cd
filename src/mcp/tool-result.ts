// Tool results in the one shape every tool uses: JSON as structuredContent plus the same JSON as
// one text block; failures as `isError: true` with a message saying what was wrong and what to do.

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode } from '../util/errors.js';
import type { CallOutcome } from './call-outcome.js';

/** A tool failure the caller can act on; `code` is stable, `message` tells the caller what to do. */
export class ToolFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly outcome: CallOutcome = 'error',
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

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
