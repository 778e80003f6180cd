// Sandbox methods backed by the catalog: search_tools from code, and the read-only `servers/`
// tree of generated TypeScript declarations (one file per tool), rebuilt when the catalog changes.

import { HostError } from '../executor/index.js';
import type { HostMethod, VirtualTree } from '../executor/index.js';
import { CatalogError, renderServerIndex, renderToolFile, SERVERS_ROOT, serverIndexPath, toolFilePath } from '../catalog/index.js';
import type { Catalog, DetailLevel } from '../catalog/index.js';

export function catalogMethods(catalog: Catalog): Record<string, HostMethod> {
  return {
    search_tools: async ([query, options]) => {
      if (typeof query !== 'string') throw new HostError('INVALID_ARGUMENT', 'search_tools(query, options): query must be a string', 'TypeError');
      const o = (options !== null && typeof options === 'object' ? options : {}) as Record<string, unknown>;
      try {
        return catalog.search({
          query,
          category: typeof o.category === 'string' ? o.category : null,
          detail_level: (typeof o.detail_level === 'string' ? o.detail_level : 'summary') as DetailLevel,
          limit: typeof o.limit === 'number' ? o.limit : undefined,
        });
      } catch (err) {
        if (err instanceof CatalogError) throw new HostError(err.code, err.message, 'ValueError');
        throw err;
      }
    },
  };
}

/** The `servers/` view: paths are computed per catalog generation, file texts on demand. */
export function serversTree(catalog: Catalog): VirtualTree {
  let generation = -1;
  let files: string[] = [];
  let byPath = new Map<string, () => string>();
  const refresh = (): void => {
    if (generation === catalog.generation) return;
    generation = catalog.generation;
    byPath = new Map();
    const byCategory = new Map<string, ReturnType<Catalog['list']>[number][]>();
    for (const entry of catalog.list()) {
      const list = byCategory.get(entry.category) ?? [];
      list.push(entry);
      byCategory.set(entry.category, list);
      byPath.set(toolFilePath(entry), () => renderToolFile(entry));
    }
    for (const [category, entries] of byCategory) {
      byPath.set(serverIndexPath(category), () => renderServerIndex(category, entries, catalog.describeCategory(category)));
    }
    files = [...byPath.keys()].sort();
  };
  return {
    root: SERVERS_ROOT,
    list(subpath) {
      refresh();
      if (subpath === SERVERS_ROOT) return files;
      const prefix = `${subpath}/`;
      const found = files.filter((f) => f.startsWith(prefix));
      return found.length > 0 ? found : byPath.has(subpath) ? [subpath] : undefined;
    },
    read(file) {
      refresh();
      return byPath.get(file)?.();
    },
  };
}
