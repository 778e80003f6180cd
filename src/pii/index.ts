// The PII subsystem's public API: detection, per-session vaults, tokens and flow rules.

export { detectPii, piiTypesIn } from './detectors.js';
export { checkFlow, toolPatternMatches } from './flows.js';
export { piiTypesInYielding } from './detect-chunked.js';
export { closePiiHelper, piiHelperStats } from './pii-helper.js';
export { PII_TYPES } from './pii-types.js';
export type {
  DetokenizeResult,
  DetokenizeValueResult,
  FlowDecision,
  PiiMatch,
  PiiType,
  PiiVaultOptions,
  PiiVaultsOptions,
  PiiVaultsStats,
  TokenizeResult,
  UnrestorableReason,
} from './pii-types.js';
export { formatToken, tokensIn } from './tokens.js';
export { DEFAULT_MAX_TOKENS, PiiVault } from './vault.js';
export { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_TTL_SECONDS, DEFAULT_TOKEN_TTL_SECONDS, PiiVaults } from './vaults.js';
export { describeUnrestorable, MemoryVaultStore } from './vault-store.js';
export type { MemoryVaultStoreOptions, VaultOwner, VaultStore } from './vault-store.js';
