// Sandbox methods backed by the catalog: search_tools from code, and the read-only `servers/`
// tree of generated TypeScript declarations (one file per tool). Both show the calling agent
// only what its permissions let it see (catalog-access.ts), as the MCP discovery tools do.

import { LRUCache } from 'lru-cache';
import type { Config } from '../config/config-types.js';
import { HostError } from '../executor/index.js';
import type { CallIdentity, HostMethod, VirtualTree } from '../executor/index.js';
import { profileSearchDefaults, renderServerIndex, renderToolFile, SERVERS_ROOT, serverIndexPath, toolFilePath } from '../catalog/index.js';
import type { Catalog, CatalogViewer, DetailLevel, ToolEntry } from '../catalog/index.js';
import { catalogViewer } from './catalog-access.js';
import type { CatalogAccessDeps } from './catalog-access.js';

/** Distinct views of the servers/ tree kept (one per agent permission set and server states). */
const MAX_TREES = 64;

/** `config.server.toolProfile` sets search_tools' defaults, as for the MCP tool. */
export type CatalogMethodsDeps = CatalogAccessDeps & { catalog: Catalog; config: Partial<Pick<Config, 'server'>> };

function viewerOf(deps: CatalogMethodsDeps, identity: CallIdentity): CatalogViewer {
  return catalogViewer(deps, { agent: identity.agent, permissions: identity.permissions });
}

export function catalogMethods(deps: CatalogMethodsDeps): Record<string, HostMethod> {
  const defaults = profileSearchDefaults(deps.config.server?.toolProfile);
  return {
    search_tools: async ([query, options], ctx) => {
      if (typeof query !== 'string') throw new HostError('INVALID_ARGUMENT', 'search_tools(query, options): query must be a string', 'TypeError');
      const o = (options !== null && typeof options === 'object' ? options : {}) as Record<string, unknown>;
      await deps.catalog.prepareSearch(query);
      return deps.catalog.search(
        {
          query,
          category: typeof o.category === 'string' ? o.category : null,
          detail_level: (typeof o.detail_level === 'string' ? o.detail_level : 'summary') as DetailLevel,
          limit: typeof o.limit === 'number' ? o.limit : defaults.limit,
          callable_only: o.callable_only === true,
          compact: defaults.compact,
        },
        viewerOf(deps, ctx.identity),
      );
    },
  };
}

interface Tree {
  files: string[];
  byPath: Map<string, () => string>;
}

/** The `servers/` view: paths are computed per catalog generation and viewer, file texts on demand. */
export function serversTree(deps: CatalogMethodsDeps): VirtualTree {
  const { catalog } = deps;
  const trees = new LRUCache<string, Tree>({ max: MAX_TREES });
  const treeFor = (identity: CallIdentity): Tree => {
    const viewer = viewerOf(deps, identity);
    // Visibility depends on the agent and its permissions only, not on server states.
    const key = `${catalog.generation}\u0000${identity.agent}\u0000${identity.permissions.tools.join('\u0001')}`;
    const known = trees.get(key);
    if (known) return known;
    const byPath = new Map<string, () => string>();
    const byCategory = new Map<string, ToolEntry[]>();
    for (const entry of catalog.list()) {
      if (!viewer.visible(entry)) continue;
      const list = byCategory.get(entry.category) ?? [];
      list.push(entry);
      byCategory.set(entry.category, list);
      byPath.set(toolFilePath(entry), () => renderToolFile(entry));
    }
    for (const [category, entries] of byCategory) {
      byPath.set(serverIndexPath(category), () => renderServerIndex(category, entries, catalog.describeCategory(category)));
    }
    const tree = { files: [...byPath.keys()].sort(), byPath };
    trees.set(key, tree);
    return tree;
  };
  return {
    root: SERVERS_ROOT,
    list(subpath, identity) {
      const { files, byPath } = treeFor(identity);
      if (subpath === SERVERS_ROOT) return files;
      const prefix = `${subpath}/`;
      const found = files.filter((f) => f.startsWith(prefix));
      return found.length > 0 ? found : byPath.has(subpath) ? [subpath] : undefined;
    },
    read(file, identity) {
      return treeFor(identity).byPath.get(file)?.();
    },
  };
}
