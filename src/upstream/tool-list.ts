// Reads a server's whole tool list, following pagination cursors, into frozen UpstreamTool
// records: frozen because the catalog, the validator cache and the sandbox all share them.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamTool } from './upstream-types.js';

/** Pages of `tools/list` followed before the server is judged to loop. */
const MAX_TOOL_PAGES = 1_000;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function toUpstreamTool(server: string, tool: Tool): UpstreamTool {
  const out: UpstreamTool = {
    server,
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema,
  };
  const title = tool.title ?? tool.annotations?.title;
  if (title !== undefined) out.title = title;
  if (tool.outputSchema !== undefined) out.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) out.annotations = tool.annotations;
  return deepFreeze(out);
}

/** All tools of a connected server; [] when it has no tools capability. A repeated cursor is an error. */
export async function listAllTools(client: Client, server: string, timeoutMs: number): Promise<UpstreamTool[]> {
  if (client.getServerCapabilities()?.tools === undefined) return [];
  const byName = new Map<string, UpstreamTool>();
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    for (const tool of result.tools) {
      if (!byName.has(tool.name)) byName.set(tool.name, toUpstreamTool(server, tool));
    }
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') return [...byName.values()];
    if (seenCursors.has(cursor)) throw new Error(`tools/list returned the cursor ${JSON.stringify(cursor)} twice`);
    seenCursors.add(cursor);
  }
  throw new Error(`tools/list returned more than ${MAX_TOOL_PAGES} pages`);
}
