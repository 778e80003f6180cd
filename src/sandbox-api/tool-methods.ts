// tools.SERVER.TOOL(args) from sandbox code: permission check, PII restore and flow rules on the
// way out, the call through the upstream manager (bounded by the execute_code call), and the
// result counted as data the call pulled in.

import type { Config } from '../config/config-types.js';
import { HostError } from '../executor/index.js';
import type { CallIdentity, HostMethod } from '../executor/index.js';
import { checkFlow, piiTypesIn } from '../pii/index.js';
import type { PiiVaults } from '../pii/index.js';
import { UpstreamError } from '../upstream/index.js';
import type { UpstreamManager } from '../upstream/index.js';
import { requireTool, toolAllowed } from './permissions.js';

export function toolMethods(config: Config, upstream: UpstreamManager, vaults: PiiVaults | undefined): Record<string, HostMethod> {
  return {
    call_tool: async ([server, tool, args], ctx) => {
      if (typeof server !== 'string' || typeof tool !== 'string') throw new HostError('INVALID_ARGUMENT', 'tools.SERVER.TOOL(args): server and tool must be names', 'TypeError');
      requireTool(ctx.identity.permissions, server, tool);
      let outgoing: unknown = args ?? {};
      if (vaults && config.pii.auto) {
        const restored = vaults.vault(ctx.identity.sessionId).detokenizeValue(outgoing);
        if (restored.unknown.length > 0) {
          throw new HostError(
            'UNKNOWN_PII_TOKEN',
            `${server}.${tool} was not called: its arguments hold PII token(s) this session does not know (${restored.unknown.slice(0, 3).join(', ')}); tokens can only be restored in the session that made them`,
            'PermissionError',
          );
        }
        outgoing = restored.value;
      }
      if (config.pii.flows.length > 0) {
        const types = piiTypesIn(JSON.stringify(outgoing) ?? '');
        const decision = checkFlow(config.pii.flows, server, tool, types);
        if (!decision.allowed) throw new HostError('PII_FLOW_REFUSED', decision.message, 'PermissionError');
      }
      try {
        const result = await upstream.callTool(server, tool, outgoing, { signal: ctx.signal });
        ctx.account('in', result);
        return result;
      } catch (err) {
        if (err instanceof UpstreamError) throw new HostError(err.code, err.message, err.code === 'INVALID_ARGUMENTS' || err.code === 'UNKNOWN_TOOL' ? 'TypeError' : 'ToolError');
        throw err;
      }
    },
  };
}

/** The upstream tools an identity may call, as `server.tool` (what `tools` holds in the sandbox). */
export function allowedToolNames(upstream: UpstreamManager, identity: CallIdentity): string[] {
  return upstream
    .tools()
    .filter((t) => toolAllowed(identity.permissions, t.server, t.name))
    .map((t) => `${t.server}.${t.name}`);
}
