// How a tool call ended, as the tools, the call recorder and the session log report it: its own
// file, so the recorder and the MCP front's contract (mcp-types.ts) need not import each other.

/**
 * How a tool call ended, for logs and metrics:
 * - 'ok': success;
 * - 'error': the tool ran and failed (guest code threw, file not found, ...);
 * - 'invalid': arguments rejected before the tool ran, or unknown tool;
 * - 'denied': the agent lacks a permission;
 * - 'timeout', 'memory', 'cancelled': execute_code limits and cancellation;
 * - 'overloaded': queue full;
 * - 'internal': a bug on our side (logged with its stack).
 */
export type CallOutcome = 'ok' | 'error' | 'invalid' | 'denied' | 'timeout' | 'memory' | 'cancelled' | 'overloaded' | 'internal';

export const CALL_OUTCOMES: readonly CallOutcome[] = ['ok', 'error', 'invalid', 'denied', 'timeout', 'memory', 'cancelled', 'overloaded', 'internal'];
