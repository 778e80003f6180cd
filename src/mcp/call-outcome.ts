// How a tool call ended: declared with the error rows (util/daemon-error.ts), whose outcomes are
// these, and re-exported here for the MCP front.

export { CALL_OUTCOMES } from '../util/daemon-error.js';
export type { CallOutcome } from '../util/daemon-error.js';
