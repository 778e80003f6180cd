// The host side of the sandbox API for every subsystem, assembled for createHostApi: each
// subsystem that is present contributes its methods; absent ones contribute nothing.

import type { Config } from '../config/config-types.js';
import type { CallIdentity, HostMethod, VirtualTree } from '../executor/index.js';
import type { Catalog } from '../catalog/index.js';
import type { VaultStore } from '../pii/index.js';
import type { SkillRepository } from '../skills/index.js';
import type { UpstreamManager } from '../upstream/index.js';
import { catalogMethods, serversTree } from './catalog-methods.js';
import { fetchMethod } from './fetch-method.js';
import { piiMethods } from './pii-methods.js';
import { skillMethods } from './skill-methods.js';
import { allowedToolNames, toolMethods } from './tool-methods.js';

export { hostAllowed, toolAllowed } from './permissions.js';

export interface SandboxApiDeps {
  config: Config;
  skills?: SkillRepository;
  pii?: VaultStore;
  catalog?: Catalog;
  upstream?: UpstreamManager;
}

export interface SandboxApi {
  extensions: Record<string, HostMethod>;
  toolNames: (identity: CallIdentity) => string[];
  virtual: VirtualTree[];
}

export function createSandboxApi(deps: SandboxApiDeps): SandboxApi {
  const { config, skills, pii, catalog, upstream } = deps;
  return {
    extensions: {
      ...(skills ? skillMethods(skills, config.agents.length > 0) : {}),
      ...(pii ? piiMethods(pii) : {}),
      ...(catalog ? catalogMethods({ config, catalog, ...(upstream ? { upstream } : {}) }) : {}),
      ...(upstream ? toolMethods(config, upstream, pii, catalog) : {}),
      ...fetchMethod(config),
    },
    toolNames: (identity) => (upstream ? allowedToolNames(upstream, identity) : []),
    virtual: catalog ? [serversTree({ config, catalog, ...(upstream ? { upstream } : {}) })] : [],
  };
}
