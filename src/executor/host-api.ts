// The host side of every sandbox power. A guest's call arrives here as (method, args) with the
// caller's identity; permissions, confinement and PII policy are applied here and nowhere else.

import path from 'node:path';
import type { Config } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import { WorkspaceError } from '../workspace/index.js';
import type { WorkspaceNamespace, WorkspaceStore } from '../workspace/index.js';
import type { CallIdentity, HostApi, HostCallContext } from './executor-types.js';
import { HostError } from './executor-types.js';

/** One sandbox method: validated arguments in, JSON data out. */
export type HostMethod = (args: readonly unknown[], ctx: HostCallContext) => Promise<unknown>;

/** A read-only tree mounted over the workspace (the catalog's `servers/` view), as one caller sees it. */
export interface VirtualTree {
  /** Top folder name, e.g. 'servers'. */
  readonly root: string;
  /** Files below `subpath` (relative to the workspace) that `identity` may see, or undefined if it is not in the tree. */
  list(subpath: string, identity: CallIdentity): string[] | undefined;
  /** Text of `file`, or undefined if there is no such file for `identity`. */
  read(file: string, identity: CallIdentity): string | undefined;
}

export interface HostApiDeps {
  config: Config;
  workspace: WorkspaceStore;
  logger: Logger;
  /** Further methods contributed by subsystems (skills, PII, catalog, upstream tools, fetch). */
  extensions?: Readonly<Record<string, HostMethod>>;
  /** Upstream tools the identity may call, as `server.tool`. */
  toolNames?: (identity: CallIdentity) => string[];
  /** Read-only trees shown in the workspace (not written to disk). */
  virtual?: readonly VirtualTree[];
}

/**
 * The virtual tree a guest path falls in, if any, with the path as the tree knows it. Paths are
 * normalized first, so `././servers/x` and `x/../servers/x` are in it too.
 */
function treeOf(trees: readonly VirtualTree[], file: unknown): { tree: VirtualTree; path: string } | undefined {
  if (typeof file !== 'string' || file === '') return undefined;
  const norm = path.posix.normalize(file).replace(/^\.\//, '').replace(/\/+$/, '');
  const tree = trees.find((t) => norm === t.root || norm.startsWith(`${t.root}/`));
  return tree ? { tree, path: norm } : undefined;
}

export function createHostApi(deps: HostApiDeps): HostApi {
  const { workspace } = deps;
  const view = (ctx: HostCallContext, write: boolean): WorkspaceNamespace => {
    const access = ctx.identity.permissions.workspace;
    if (access === 'none' || (write && access !== 'read-write')) {
      throw new HostError('PERMISSION_DENIED', `permission denied: this agent's workspace permission is "${access}"; ${write ? 'writing' : 'reading'} files needs "${write ? 'read-write' : 'read'}"`, 'PermissionError');
    }
    return workspace.namespace(ctx.identity.workspaceNamespace);
  };

  const trees = deps.virtual ?? [];
  const readOnly = (file: unknown): void => {
    const found = treeOf(trees, file);
    if (found) throw new HostError('READ_ONLY', `${found.tree.root}/ is a generated, read-only view of the tool catalog; write elsewhere in the workspace`, 'PermissionError');
  };

  const methods: Record<string, HostMethod> = {
    read_file: async ([file], ctx) => {
      const found = treeOf(trees, file);
      if (found) {
        const text = found.tree.read(found.path, ctx.identity);
        if (text === undefined) throw new HostError('NOT_FOUND', `File not found: ${JSON.stringify(file)}; list_files(${JSON.stringify(found.tree.root)}) shows what is there`, 'FileNotFoundError');
        return text;
      }
      const { content } = await view(ctx, false).readFile(file);
      ctx.account('in', content);
      return content;
    },
    write_file: async ([file, content], ctx) => {
      readOnly(file);
      const { bytes } = await view(ctx, true).writeFile(file, content);
      return `Written ${bytes} bytes to ${String(file)}`;
    },
    list_files: async ([subpath], ctx) => {
      const found = treeOf(trees, subpath);
      if (found) {
        const files = found.tree.list(found.path, ctx.identity);
        if (files === undefined) throw new HostError('NOT_FOUND', `Directory not found: ${JSON.stringify(subpath)}`, 'FileNotFoundError');
        return files;
      }
      return view(ctx, false).listFiles(subpath ?? '.');
    },
    delete_file: async ([file], ctx) => {
      readOnly(file);
      await view(ctx, true).deleteFile(file);
      return `Deleted ${String(file)}`;
    },
    ...deps.extensions,
  };

  return {
    async call(method, args, ctx) {
      const fn = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!fn) throw new HostError('UNKNOWN_METHOD', `${method} is not available in this sandbox`, 'Error');
      try {
        return await fn(args, ctx);
      } catch (err) {
        throw toHostError(err);
      }
    },
    toolNames: (identity) => deps.toolNames?.(identity) ?? [],
    fetchAllowed: (identity) => identity.permissions.net.length > 0 && deps.extensions?.fetch !== undefined,
    // The same permission read_file checks above; the worker serves only plain reads inside the
    // namespace and sends everything else here.
    async readGrant(identity) {
      if (identity.permissions.workspace === 'none') return undefined;
      // A store without a local folder has no fast path: the worker sends every read here.
      const folder = workspace.namespace(identity.workspaceNamespace).localFolder;
      if (folder === undefined) return undefined;
      const root = await folder.root();
      return { root, maxBytes: workspace.maxFileBytes, hostOnly: trees.map((t) => t.root) };
    },
  };
}

function toHostError(err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (err instanceof WorkspaceError) return new HostError(err.code, err.message, err.name);
  return err;
}
