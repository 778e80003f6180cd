// The host side of every sandbox power. A guest's call arrives here as (method, args) with the
// caller's identity; permissions, confinement and PII policy are applied here and nowhere else.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ReadGrant } from '../../workers/kit/protocol.js';
import { decide, Grant, requireGrant } from '../access/index.js';
import type { AccessResource } from '../access/index.js';
import type { Config } from '../config/config-types.js';
import { GUEST_ERROR } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { workspaceView } from '../workspace/index.js';
import type { WorkspaceNamespace, WorkspaceStore } from '../workspace/index.js';
import type { CallIdentity, HostApi, HostCallContext } from './executor-types.js';
import { HostError, subjectOf } from './executor-types.js';

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
  /** The caller's workspace, opened from the access check's grant for `action`. */
  const view = (ctx: HostCallContext, action: string, write: boolean): WorkspaceNamespace =>
    workspaceView(workspace, authorizeCall(ctx.identity, action, { kind: 'workspace', needs: write ? 'read-write' : 'read' }));

  const trees = deps.virtual ?? [];
  const readOnly = (file: unknown): void => {
    const found = treeOf(trees, file);
    if (found) throw new HostError('READ_ONLY', `${found.tree.root}/ is a generated, read-only view of the tool catalog; write elsewhere in the workspace`, GUEST_ERROR.PermissionError);
  };

  const methods: Record<string, HostMethod> = {
    read_file: async ([file], ctx) => {
      const found = treeOf(trees, file);
      if (found) {
        const text = found.tree.read(found.path, ctx.identity);
        if (text === undefined) throw new HostError('NOT_FOUND', `File not found: ${JSON.stringify(file)}; list_files(${JSON.stringify(found.tree.root)}) shows what is there`, GUEST_ERROR.FileNotFoundError);
        return text;
      }
      const { content } = await view(ctx, 'read_file', false).readFile(file);
      ctx.account('in', content);
      return content;
    },
    write_file: async ([file, content], ctx) => {
      readOnly(file);
      const { bytes } = await view(ctx, 'write_file', true).writeFile(file, content);
      return `Written ${bytes} bytes to ${String(file)}`;
    },
    list_files: async ([subpath], ctx) => {
      const found = treeOf(trees, subpath);
      if (found) {
        const files = found.tree.list(found.path, ctx.identity);
        if (files === undefined) throw new HostError('NOT_FOUND', `Directory not found: ${JSON.stringify(subpath)}`, GUEST_ERROR.FileNotFoundError);
        return files;
      }
      return view(ctx, 'list_files', false).listFiles(subpath ?? '.');
    },
    delete_file: async ([file], ctx) => {
      readOnly(file);
      await view(ctx, 'delete_file', true).deleteFile(file);
      return `Deleted ${String(file)}`;
    },
    ...deps.extensions,
  };

  return {
    async call(method, args, ctx) {
      const fn = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!fn) throw new HostError('UNKNOWN_METHOD', `${method} is not available in this sandbox`);
      // A refusal reaches the guest as its code's row says (util/daemon-error.ts, via the executor).
      return fn(args, ctx);
    },
    toolNames: (identity) => deps.toolNames?.(identity) ?? [],
    fetchAllowed: (identity) => identity.permissions.net.length > 0 && deps.extensions?.fetch !== undefined,
    // The same permission read_file checks above; the worker serves only plain reads inside the
    // namespace and sends everything else here.
    async readGrant(identity) {
      const answer = decide(subjectOf(identity), 'read_file', { kind: 'workspace', needs: 'read' });
      return answer instanceof Grant ? workerReadGrant(workspace, answer, trees) : undefined;
    },
  };
}

/** The access check for a sandbox method: a Grant, or the refusal as the guest's PermissionError. */
export function authorizeCall(identity: CallIdentity, action: string, resource: AccessResource): Grant {
  const answer = decide(subjectOf(identity), action, resource);
  if (answer instanceof Grant) return answer;
  // A guest sees it as its code's row says: PermissionError.
  throw answer;
}

/**
 * Writes the whole of a call the output budget cut to the caller's workspace (`outputs/`), when
 * its grant allows writing there; resolves with the file's name, or undefined when it may not.
 */
export async function spillWhole(store: WorkspaceStore | undefined, identity: CallIdentity, whole: { result: unknown; output: string[] }): Promise<string | undefined> {
  const answer = decide(subjectOf(identity), 'execute_code (saving the whole output)', { kind: 'workspace', needs: 'read-write' });
  if (store === undefined || !(answer instanceof Grant)) return undefined;
  const name = `outputs/execution-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.json`;
  await workspaceView(store, answer).writeFile(name, JSON.stringify(whole));
  return name;
}

/** The worker's read grant (fast-read.ts), made only from the access check's grant to read the workspace. */
async function workerReadGrant(workspace: WorkspaceStore, grant: Grant, trees: readonly VirtualTree[]): Promise<ReadGrant | undefined> {
  // A store without a local folder has no fast path: the worker sends every read here.
  const folder = workspaceView(workspace, requireGrant(grant, 'workspace', 'read')).localFolder;
  if (folder === undefined) return undefined;
  return { root: await folder.root(), maxBytes: workspace.maxFileBytes, hostOnly: trees.map((t) => t.root) };
}
