// One MCP server per session: the SDK's McpServer with every tool whose subsystem is wired,
// bound to the session's agent. Transports (stdio, Streamable HTTP, in-memory) connect to it
// through ObservedTransport so every call is logged and counted.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext } from './define-tool.js';
import type { McpServices, SessionInfo } from './mcp-types.js';
import { InFlight } from './in-flight.js';
import { ObservedTransport } from './observed-transport.js';
import { registerResources } from './resources.js';
import { SessionLog } from './session-log.js';
import { registerOptionalTools } from './tools/optional-tools.js';
import { registerExecuteCode } from './tools/execute-code.js';
import { registerStatsTool } from './tools/stats-tool.js';
import { registerWorkspaceTools } from './tools/workspace-tools.js';
import { serveToolList } from './tool-list.js';

export const SERVER_NAME = 'code-execution-mcp';
/** The metrics label of calls to tools that do not exist. */
export const UNKNOWN_TOOL = '(unknown)';

/** How to use this server, said at initialize (session) and server/discover (stateless). */
export const INSTRUCTIONS = [
  'Run code instead of calling tools one by one.',
  'Use execute_code to process data inside the sandbox and return only small results; discover tools with search_tools and get_tool_definition, then call them from code as tools.SERVER.TOOL(args).',
  'Keep files in your workspace (write_workspace_file, read_file() in code) and save working code as skills (save_skill, import_skill in code).',
].join(' ');

export interface McpSession {
  readonly server: McpServer;
  readonly info: SessionInfo;
  /** Requests received and not yet answered; a drain waits on it. */
  readonly requests: InFlight;
  /** Connect a transport; returns the observing wrapper (to inject cancellations). */
  connect(transport: Transport): Promise<ObservedTransport>;
  close(): Promise<void>;
}

export function createMcpSession(services: McpServices, info: SessionInfo): McpSession {
  services.onSession?.();
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Code Execution MCP', version: services.version },
    { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: INSTRUCTIONS },
  );
  const handled = new Set<RequestId>();
  const log = new SessionLog(server);
  const ctx: ToolContext = { services, session: info, handled, names: new Set(), log, listings: [] };
  registerExecuteCode(server, ctx);
  registerOptionalTools(server, ctx);
  registerWorkspaceTools(server, ctx);
  registerStatsTool(server, ctx);
  serveToolList(server, ctx.listings);
  registerResources(server, ctx);

  let closed = false;
  const requests = new InFlight();
  return {
    server,
    info,
    requests,
    async connect(transport) {
      const observed = new ObservedTransport(
        transport,
        handled,
        ({ tool, durationMs }) => {
          const known = ctx.names.has(tool);
          services.recorder.record({
            agent: info.agent.name,
            session: info.sessionId,
            // metrics keep a bounded set of names: a client may ask for any string
            tool: known ? tool : UNKNOWN_TOOL,
            ...(known ? {} : { requested_tool: tool.slice(0, 64) }),
            outcome: 'invalid',
            duration_ms: durationMs,
          });
          log.callEnded({ tool: known ? tool : UNKNOWN_TOOL, outcome: 'invalid', durationMs });
          return known ? undefined : unknownToolMessage(tool, [...ctx.names]);
        },
        services.now,
        requests,
      );
      await server.connect(observed);
      return observed;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
}

function unknownToolMessage(tool: string, names: readonly string[]): string {
  return (
    `Unknown tool: ${tool.slice(0, 64)}. This server's tools are: ${names.join(', ')}. ` +
    'Tools of other MCP servers are not called directly: find them with search_tools and call them from execute_code as tools.SERVER.TOOL(args).'
  );
}
