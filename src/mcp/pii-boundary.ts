// The client boundary for PII: with pii.auto on, what leaves the daemon towards the model
// (execute_code results and output, read_workspace_file content, progress lines) passes through
// here and is tokenized with the session's vault. Without pii.auto it passes through unchanged.

import type { PiiVaults } from '../pii/index.js';
import type { SessionInfo } from './mcp-types.js';

export interface PiiBoundary {
  /** True when outgoing data is tokenized. */
  readonly active: boolean;
  outgoingText(text: string, session: SessionInfo): string;
  /** A JSON value: every string inside it is tokenized. */
  outgoingValue(value: unknown, session: SessionInfo): unknown;
}

export const PASS_THROUGH_BOUNDARY: PiiBoundary = Object.freeze({
  active: false,
  outgoingText: (text: string) => text,
  outgoingValue: (value: unknown) => value,
});

/** The pii.auto boundary over the session vaults: each session tokenizes with its own vault. */
export function createPiiBoundary(vaults: PiiVaults): PiiBoundary {
  return Object.freeze({
    active: true,
    outgoingText: (text: string, session: SessionInfo) => vaults.vault(session.sessionId).tokenize(text).text,
    outgoingValue: (value: unknown, session: SessionInfo) => vaults.vault(session.sessionId).tokenizeValue(value),
  });
}
