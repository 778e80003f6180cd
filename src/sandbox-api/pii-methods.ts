// Sandbox methods backed by the caller's PII vault: tokens made here can be restored only by the
// same session, in the sandbox or through restore_pii.

import { HostError } from '../executor/index.js';
import type { HostMethod } from '../executor/index.js';
import type { VaultOwner, VaultStore } from '../pii/index.js';

export function piiMethods(vaults: VaultStore): Record<string, HostMethod> {
  const text = (v: unknown, fn: string): string => {
    if (typeof v !== 'string') throw new HostError('INVALID_ARGUMENT', `${fn}(text): text must be a string`, 'TypeError');
    return v;
  };
  return {
    tokenize_pii: async ([value], ctx) => (await vaults.tokenize(ownerOf(ctx.identity), text(value, 'tokenize_pii'))).text,
    detokenize_pii: async ([value], ctx) => (await vaults.detokenize(ownerOf(ctx.identity), text(value, 'detokenize_pii'))).text,
  };
}

/** The vault owner of a sandbox call: its session and its agent. */
export function ownerOf(identity: { sessionId: string; agent: string }): VaultOwner {
  return { sessionId: identity.sessionId, agent: identity.agent };
}
