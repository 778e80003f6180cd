// The host side of every sandbox power. A guest's call arrives here as (method, args) with the
// caller's identity; permissions, confinement and PII policy are applied here and nowhere else.

import type { Config } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import { WorkspaceError } from '../workspace/index.js';
import type { Workspace, WorkspaceView } from '../workspace/index.js';
import type { CallIdentity, HostApi, HostCallContext } from './executor-types.js';
import { HostError } from './executor-types.js';

/** One sandbox method: validated arguments in, JSON data out. */
export type HostMethod = (args: readonly unknown[], ctx: HostCallContext) => Promise<unknown>;

export interface HostApiDeps {
  config: Config;
  workspace: Workspace;
  logger: Logger;
  /** Further methods contributed by subsystems (skills, PII, catalog, upstream tools, fetch). */
  extensions?: Readonly<Record<string, HostMethod>>;
  /** Upstream tools the identity may call, as `server.tool`. */
  toolNames?: (identity: CallIdentity) => string[];
}

export function createHostApi(deps: HostApiDeps): HostApi {
  const { workspace } = deps;
  const view = (ctx: HostCallContext, write: boolean): WorkspaceView => {
    const access = ctx.identity.permissions.workspace;
    if (access === 'none' || (write && access !== 'read-write')) {
      throw new HostError('PERMISSION_DENIED', `permission denied: this agent's workspace permission is "${access}"; ${write ? 'writing' : 'reading'} files needs "${write ? 'read-write' : 'read'}"`, 'PermissionError');
    }
    return workspace.namespace(ctx.identity.workspaceNamespace);
  };

  const methods: Record<string, HostMethod> = {
    read_file: async ([file], ctx) => {
      const { content } = await view(ctx, false).readFile(file);
      ctx.account('in', content);
      return content;
    },
    write_file: async ([file, content], ctx) => {
      const { bytes } = await view(ctx, true).writeFile(file, content);
      return `Written ${bytes} bytes to ${String(file)}`;
    },
    list_files: async ([subpath], ctx) => view(ctx, false).listFiles(subpath ?? '.'),
    delete_file: async ([file], ctx) => {
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
  };
}

function toHostError(err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (err instanceof WorkspaceError) return new HostError(err.code, err.message, err.name);
  return err;
}
