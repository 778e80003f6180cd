// The client boundary for PII: with pii.auto on, what leaves the daemon towards the model
// (execute_code results and output, read_workspace_file content, progress lines) passes through
// here and is tokenized with the session's vault. Without pii.auto it passes through unchanged.

import type { VaultOwner, VaultStore } from '../pii/index.js';
import type { PiiBoundary, SessionInfo } from './mcp-types.js';

export const PASS_THROUGH_BOUNDARY: PiiBoundary = Object.freeze({
  active: false,
  outgoingText: (text: string) => Promise.resolve(text),
  outgoingValue: (value: unknown) => Promise.resolve(value),
});

function ownerOf(session: SessionInfo): VaultOwner {
  return { sessionId: session.sessionId, agent: session.agent.name };
}

/** The pii.auto boundary over the vault store: each session tokenizes with its own vault. */
export function createPiiBoundary(vaults: VaultStore): PiiBoundary {
  return Object.freeze({
    active: true,
    outgoingText: async (text: string, session: SessionInfo) => (await vaults.tokenize(ownerOf(session), text)).text,
    outgoingValue: (value: unknown, session: SessionInfo) => vaults.tokenizeValue(ownerOf(session), value),
  });
}
