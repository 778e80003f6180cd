// Subsystems owned by other folders that the MCP front wires when they are present. A tool whose
// subsystem is absent is not registered at all (no stubs), so tools/list never lies.

import type { PiiVaults } from '../pii/index.js';

export interface OptionalServices {
  /** Per-session PII vaults: sanitize_pii / restore_pii, keyed by the MCP session id. */
  pii?: PiiVaults;
}
