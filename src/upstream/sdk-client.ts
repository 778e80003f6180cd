// The MCP SDK's client side (Client and its three transports, and the SDK's types module with
// its errors), loaded when the first upstream server connects rather than at start: it pulls in
// cross-spawn, eventsource, the OAuth helpers and zod (hundreds of ms of start-up, on `exec`'s
// path before its sandbox spawns), and a daemon without mcpServers never needs it.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

export interface SdkClient {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  SSEClientTransport: typeof SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
}

let loading: Promise<SdkClient> | undefined;
let loaded: SdkClient | undefined;

/** The client modules, loading them on the first call. */
export function loadSdkClient(): Promise<SdkClient> {
  loading ??= (async (): Promise<SdkClient> => {
    const [client, stdio, sse, http, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    loaded = {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      SSEClientTransport: sse.SSEClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StreamableHTTPError: http.StreamableHTTPError,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    };
    return loaded;
  })();
  return loading;
}

/** The client modules once loadSdkClient() has resolved; throws before (a caller that did not await it). */
export function sdkClient(): SdkClient {
  if (loaded === undefined) throw new Error('the MCP client modules are not loaded yet: await loadSdkClient() first');
  return loaded;
}

/** The client modules if loaded, else undefined (nothing of theirs can exist yet). */
export function sdkClientIfLoaded(): SdkClient | undefined {
  return loaded;
}

/** An McpError's code (an error of the SDK's client: none exists before it is loaded), else undefined. */
export function mcpErrorCode(error: unknown): number | undefined {
  return loaded !== undefined && error instanceof loaded.McpError ? error.code : undefined;
}
