// The client boundary for PII: with pii.auto on, what leaves the daemon towards the model
// (execute_code results and output, read_workspace_file content, progress lines) passes through
// here and is tokenized with the session's vault. Without pii.auto it passes through unchanged.

import type { PiiVaults } from '../pii/index.js';
import type { SessionInfo } from './mcp-types.js';

export interface PiiBoundary {
  /** True when outgoing data is tokenized. */
  readonly active: boolean;
  outgoingText(text: string, session: SessionInfo): string;
  /** outgoingText for texts of any size (a workspace file): a long one yields to the event loop between slices. */
  outgoingTextAsync(text: string, session: SessionInfo): Promise<string>;
  /** A JSON value: every string inside it is tokenized. */
  outgoingValue(value: unknown, session: SessionInfo): unknown;
}

export const PASS_THROUGH_BOUNDARY: PiiBoundary = Object.freeze({
  active: false,
  outgoingText: (text: string) => text,
  outgoingTextAsync: (text: string) => Promise.resolve(text),
  outgoingValue: (value: unknown) => value,
});

/** The pii.auto boundary over the session vaults: each session tokenizes with its own vault. */
export function createPiiBoundary(vaults: PiiVaults): PiiBoundary {
  return Object.freeze({
    active: true,
    outgoingText: (text: string, session: SessionInfo) => vaults.vault(session.sessionId).tokenize(text).text,
    outgoingTextAsync: async (text: string, session: SessionInfo) => (await vaults.vault(session.sessionId).tokenizeAsync(text)).text,
    outgoingValue: (value: unknown, session: SessionInfo) => vaults.vault(session.sessionId).tokenizeValue(value),
  });
}
