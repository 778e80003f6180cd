// The PII subsystem's public API: detection, per-agent vaults, tokens and flow rules.

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
  PiiVaultsStats,
  TokenizeResult,
  UnrestorableReason,
} from './pii-types.js';
export { formatToken, tokensIn } from './tokens.js';
export { DEFAULT_MAX_VAULT_BYTES, DEFAULT_TOKEN_TTL_SECONDS, describeUnrestorable, PiiVaultStore } from './vault-store.js';
export type { PiiVaultStoreOptions, VaultOwner, VaultStore } from './vault-store.js';
