// Subsystems owned by other folders that the MCP front wires when they are present. A tool whose
// subsystem is absent is not registered at all (no stubs), so tools/list never lies.

import type { Catalog } from '../catalog/index.js';
import type { VaultStore } from '../pii/index.js';
import type { SkillRepository } from '../skills/index.js';
import type { UpstreamManager } from '../upstream/index.js';

export interface OptionalServices {
  /** Per-session PII vaults: sanitize_pii / restore_pii, keyed by the MCP session id. */
  pii?: VaultStore;
  /** Tool catalog: search_tools, get_tool_definition, list_tool_categories. */
  catalog?: Catalog;
  /** Skill store: save_skill, load_skill, list_skills, delete_skill. */
  skills?: SkillRepository;
  /** Upstream MCP servers: their status in get_execution_stats. */
  upstream?: UpstreamManager;
}
