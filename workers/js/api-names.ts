// The global names the sandbox API defines, derived from the one table (api-contract.ts) and
// shared with the coordinator (context_vars may not shadow them). Plain data only.

export { SANDBOX_API_NAMES } from '../kit/api-contract.js';
