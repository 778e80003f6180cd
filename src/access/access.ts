// THE access check. Every surface (MCP tools and resources, the sandbox's host methods, the HTTP
// /metrics endpoint) asks `authorize` whether an agent may do an action on a resource, and gets
// back either a Grant or a PermissionDenied. A Grant is proof that the check happened (as Deno's
// permission checks return one): only this module can make one, and what opens a workspace view or
// hands a worker its read grant takes a Grant, not an identity.

import type { Permissions, SkillsAccess, WorkspaceAccess } from '../config/config-types.js';
import { hostAllowed, toolAllowed } from './patterns.js';
import { DaemonError } from '../util/daemon-error.js';

/** Who asks: an agent as the fronts and the executor know it. */
export interface AccessSubject {
  readonly name: string;
  /** The agent's workspace namespace, relative to the workspace root ('' for the root). */
  readonly workspaceNamespace: string;
  readonly permissions: Permissions;
}

/** What is asked for. */
export type AccessResource =
  | { readonly kind: 'workspace'; readonly needs: Exclude<WorkspaceAccess, 'none'> }
  | { readonly kind: 'skills'; readonly needs: Exclude<SkillsAccess, 'none'> }
  | { readonly kind: 'tool'; readonly server: string; readonly tool: string }
  /** `host` without brackets, `port` always given; `target` is how the caller wrote it (for messages). */
  | { readonly kind: 'net'; readonly host: string; readonly port: string; readonly target: string }
  | { readonly kind: 'operator' };

export type AccessKind = AccessResource['kind'];

/** Order of the levels of the `workspace` and `skills` permissions: a level includes those below it. */
export const ACCESS_RANK: Readonly<Record<WorkspaceAccess | SkillsAccess, number>> = Object.freeze({ none: 0, read: 1, 'read-write': 2, publish: 3 });

/**
 * The one refusal of an access check. Each surface adapts it: an MCP tool error with code
 * PERMISSION_DENIED, a JSON-RPC error for resources, `PermissionError` in the sandbox, HTTP 403.
 */
export class PermissionDenied extends DaemonError {
  override readonly name = 'PermissionDenied';
  constructor(
    /** The agent refused. */
    readonly agent: string,
    /** What was tried, as the caller named it (`save_skill`, `read_file`, `/metrics`). */
    readonly action: string,
    readonly resource: AccessResource,
    message: string,
  ) {
    super('PERMISSION_DENIED', message);
  }
}

/** The key only this module holds: `new Grant(...)` from anywhere else throws. */
const MINT: unique symbol = Symbol('Grant');
/** Makes a Grant; set by the class's static block, reachable from this module only. */
let mint: (subject: AccessSubject, action: string, resource: AccessResource) => Grant;

/** Proof that `subject` may do `action` on `resource`; made only by `authorize`/`decide`. */
export class Grant {
  readonly #genuine = true;
  readonly subject: AccessSubject;
  readonly action: string;
  readonly resource: AccessResource;

  private constructor(key: symbol, subject: AccessSubject, action: string, resource: AccessResource) {
    if (key !== MINT || new.target !== Grant) throw new TypeError('a Grant is made only by the access check (src/access/access.ts authorize)');
    this.subject = Object.freeze({ name: subject.name, workspaceNamespace: subject.workspaceNamespace, permissions: subject.permissions });
    this.action = action;
    this.resource = Object.freeze({ ...resource });
    Object.freeze(this);
  }

  /** Whether `value` is a Grant this module made (not a look-alike object, not a subclass). */
  static isGenuine(value: unknown): value is Grant {
    return typeof value === 'object' && value !== null && #genuine in value && Object.getPrototypeOf(value) === Grant.prototype;
  }

  static {
    // Not a static method: a symbol-keyed one could be found with Object.getOwnPropertySymbols.
    mint = (subject, action, resource) => new Grant(MINT, subject, action, resource);
  }
}

/** The answer of the access check: a Grant, or the refusal to throw or adapt. */
export function decide(subject: AccessSubject, action: string, resource: AccessResource): Grant | PermissionDenied {
  const why = refusal(subject, action, resource);
  return why === null ? mint(subject, action, resource) : new PermissionDenied(subject.name, action, resource, why);
}

/** The access check that throws: a Grant, or PermissionDenied. */
export function authorize(subject: AccessSubject, action: string, resource: AccessResource): Grant {
  const answer = decide(subject, action, resource);
  if (answer instanceof PermissionDenied) throw answer;
  return answer;
}

/** Whether the check would pass (for filtering lists: which tools to show, which resources to offer). */
export function allows(subject: Pick<AccessSubject, 'permissions'>, resource: AccessResource): boolean {
  return refusal({ name: '', workspaceNamespace: '', ...subject }, '', resource) === null;
}

/**
 * `grant` if it is genuine and for `kind` (with at least `needs` for workspace and skills);
 * otherwise a TypeError: a factory handed a forged or wrong grant is a bug, not a refusal.
 */
export function requireGrant<K extends AccessKind>(grant: unknown, kind: K, needs?: 'read' | 'read-write' | 'publish'): Grant & { resource: Extract<AccessResource, { kind: K }> } {
  if (!Grant.isGenuine(grant)) throw new TypeError(`expected a Grant from the access check for "${kind}", got ${describe(grant)}`);
  const r = grant.resource;
  if (r.kind !== kind) throw new TypeError(`expected a Grant for "${kind}", got one for "${r.kind}"`);
  if (needs !== undefined && (r.kind === 'workspace' || r.kind === 'skills') && ACCESS_RANK[r.needs] < ACCESS_RANK[needs]) {
    throw new TypeError(`expected a Grant for "${kind}" "${needs}", got one for "${r.needs}"`);
  }
  return grant as Grant & { resource: Extract<AccessResource, { kind: K }> };
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return ctor === 'Grant' ? 'an object posing as a Grant' : `an instance of ${ctor ?? 'a null-prototype object'}`;
}

/** Why the check fails (the message every surface shows), or null when it passes. */
function refusal(subject: AccessSubject, action: string, resource: AccessResource): string | null {
  const p = subject.permissions;
  switch (resource.kind) {
    case 'workspace':
    case 'skills': {
      const area = resource.kind;
      const have: WorkspaceAccess | SkillsAccess = p[area];
      if (ACCESS_RANK[have] >= ACCESS_RANK[resource.needs]) return null;
      return (
        `permission denied: ${action} needs the "${area}" permission "${resource.needs}", and agent "${subject.name}" has "${have}". ` +
        `An operator can grant it in the agent's "permissions.${area}" in the daemon configuration.`
      );
    }
    case 'tool': {
      const { server, tool } = resource;
      if (toolAllowed(p.tools, server, tool)) return null;
      return `permission denied: your tools permission (${p.tools.length ? p.tools.join(', ') : 'none'}) does not include ${server}.${tool}; the daemon's operator can add "${server}.${tool}" or "${server}.*" to this agent's permissions.tools`;
    }
    case 'net':
      if (hostAllowed(p.net, resource.host, resource.port)) return null;
      return `permission denied: ${action} to ${resource.target} is not allowed; this agent's net permission allows ${p.net.length ? p.net.join(', ') : 'no hosts'}`;
    case 'operator':
      if (p.operator === true) return null;
      return `permission denied: ${action} needs the operator permission; agent "${subject.name}" does not have it. Use the authToken, or set "permissions": {"operator": true} on an agent in the daemon's configuration`;
  }
}
