// tools.SERVER.TOOL(args) from sandbox code: permission check, the refusals that name the cause
// and the fix (unknown or unconfigured server, server down, unknown tool), PII restore and flow
// rules on the way out, the call through the upstream manager on the caller's own instance when
// the server runs per agent or per workspace, and the result counted as data the call pulled in.

import type { Config } from '../config/config-types.js';
import type { Catalog } from '../catalog/index.js';
import { HostError } from '../executor/index.js';
import type { CallIdentity, HostMethod } from '../executor/index.js';
import { checkFlow, describeUnrestorable, piiTypesInYielding } from '../pii/index.js';
import type { VaultStore } from '../pii/index.js';
import { ownerOf } from './pii-methods.js';
import { closestNames } from '../upstream/index.js';
import type { UpstreamManager } from '../upstream/index.js';
import { serverProblem } from './catalog-access.js';
import { requireTool, toolAllowed } from './permissions.js';

export function toolMethods(config: Config, upstream: UpstreamManager, vaults: VaultStore | undefined, catalog?: Catalog): Record<string, HostMethod> {
  return {
    call_tool: async ([server, tool, args], ctx) => {
      if (typeof server !== 'string' || typeof tool !== 'string') throw new HostError('INVALID_ARGUMENT', 'tools.SERVER.TOOL(args): server and tool must be names', 'TypeError');
      // The permission comes first: its refusal says nothing about whether the tool exists.
      requireTool(ctx.identity, server, tool);
      checkReachable(config, upstream, catalog, ctx.identity, server, tool);
      let outgoing: unknown = args ?? {};
      if (vaults && config.pii.auto) {
        const restored = await vaults.detokenizeValue(ownerOf(ctx.identity), outgoing);
        if (restored.unknown.length > 0) {
          throw new HostError(
            'UNKNOWN_PII_TOKEN',
            `${server}.${tool} was not called: its arguments hold PII token(s) that do not restore: ${describeUnrestorable(restored.unknown, restored.reasons)}`,
            'PermissionError',
          );
        }
        outgoing = restored.value;
      }
      if (config.pii.flows.length > 0) {
        // Off the event loop: arguments of tens of MB took the coordinator for 20-40 s here.
        const types = await piiTypesInYielding(JSON.stringify(outgoing) ?? '', ctx.identity.agent);
        const decision = checkFlow(config.pii.flows, server, tool, types);
        if (!decision.allowed) throw new HostError('PII_FLOW_REFUSED', decision.message, 'PermissionError');
      }
      // A failure reaches the guest as its code's row says (util/daemon-error.ts).
      const caller = { agent: ctx.identity.agent, workspaceNamespace: ctx.identity.workspaceNamespace };
      const result = await upstream.callTool(server, tool, outgoing, { signal: ctx.signal, caller });
      ctx.account('in', result);
      return result;
    },
  };
}

/**
 * Refuses a call that cannot succeed here, with the cause and the fix: a server nobody configured
 * (with the catalog's mcpServers entry when it has one), an unknown server, a server that is not
 * up, or a tool the server does not have. Names suggested are only ones the caller may call.
 */
function checkReachable(config: Config, upstream: UpstreamManager, catalog: Catalog | undefined, identity: CallIdentity, server: string, tool: string): void {
  const statuses = upstream.status();
  const status = statuses[server];
  const deps = { config, ...(catalog ? { catalog } : {}), upstream };
  if (status === undefined) {
    if (catalog && catalog.list(server).some((e) => e.mcp_server === server)) {
      throw new HostError('SERVER_NOT_CONFIGURED', `tools.${server}.${tool}: ${serverProblem(deps, server, undefined)?.why ?? 'not connected'}`, 'ToolError');
    }
    const usable = Object.keys(statuses).filter((name) => upstream.tools(name).some((t) => toolAllowed(identity.permissions, name, t.name)));
    const close = closestNames(server, usable);
    const hint = close.length > 0 ? ` Did you mean ${close.map((n) => `"${n}"`).join(' or ')}?` : '';
    const known = usable.length > 0 ? ` Servers you can call: ${usable.join(', ')}.` : ' No upstream server you may call is configured.';
    throw new HostError('UNKNOWN_SERVER', `tools.${server}.${tool}: there is no server "${server}".${hint}${known} search_tools finds tools by what they do.`, 'TypeError');
  }
  const problem = serverProblem(deps, server, status);
  if (problem) throw new HostError('SERVER_UNAVAILABLE', `tools.${server}.${tool} cannot be called: ${problem.why}`, 'ToolError');
  const tools = upstream.tools(server);
  if (!tools.some((t) => t.name === tool)) {
    const allowed = tools.filter((t) => toolAllowed(identity.permissions, server, t.name)).map((t) => t.name);
    const close = closestNames(tool, allowed).map((n) => `${server}.${n}`);
    const hint = close.length > 0 ? ` Did you mean ${close.join(' or ')}?` : allowed.length > 0 ? ` Its tools you can call: ${allowed.slice(0, 20).join(', ')}.` : '';
    throw new HostError('UNKNOWN_TOOL', `tools.${server}.${tool}: server "${server}" has no tool "${tool}".${hint} search_tools finds tools by what they do.`, 'TypeError');
  }
}

/** The upstream tools an identity may call, as `server.tool` (what `tools` holds in the sandbox). */
export function allowedToolNames(upstream: UpstreamManager, identity: CallIdentity): string[] {
  return upstream
    .tools()
    .filter((t) => toolAllowed(identity.permissions, t.server, t.name))
    .map((t) => `${t.server}.${t.name}`);
}
