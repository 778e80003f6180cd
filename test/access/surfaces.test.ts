// Every surface asks the one access check and denies the same request the same way: for each
// request, an agent whose permission is one level short is refused on every surface (MCP tool,
// sandbox host method, HTTP /metrics) with the check's own message for that action, and an agent
// with the permission passes on every surface. MCP resources are not offered at all without it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, PermissionDenied } from '../../src/access/index.js';
import type { AccessResource } from '../../src/access/index.js';
import type { Permissions } from '../../src/config/config-types.js';
import { createHostApi } from '../../src/executor/index.js';
import { adaptError } from '../../src/util/daemon-error.js';
import type { CallIdentity, HostApi } from '../../src/executor/index.js';
import { metricsDenied } from '../../src/mcp/http/prometheus.js';
import type { McpServices } from '../../src/mcp/mcp-types.js';
import { createSandboxApi } from '../../src/sandbox-api/index.js';
import { buildServices, connectInMemory, textOf } from '../fixtures/mcp/harness.js';
import { makeStore, makeTempDir } from '../skills/helpers.js';

type Connected = Awaited<ReturnType<typeof connectInMemory>>;
interface Agent {
  name: string;
  workspaceNamespace: string;
  permissions: Permissions;
  mcp: Connected;
  identity: CallIdentity;
}

/** What one surface answers: refused with this text (and the guest's class name, for the sandbox), or passed. */
type Answer = { refused: true; text: string; guestName?: string } | { refused: false };

interface Surface {
  name: string;
  /** The action as this surface names it to the access check. */
  action: string;
  ask(agent: Agent): Promise<Answer>;
}

interface Row {
  request: string;
  resource: AccessResource;
  low: Partial<Permissions>;
  high: Partial<Permissions>;
  surfaces: Surface[];
}

const cleanups: (() => Promise<void>)[] = [];
let services: McpServices;
let host: HostApi;

beforeAll(async () => {
  const built = await buildServices();
  const temp = await makeTempDir();
  const skills = makeStore(temp.dir);
  await skills.start();
  built.services.skills = skills;
  services = built.services;
  host = createHostApi({ config: services.config, workspace: services.workspace, logger: services.logger, extensions: createSandboxApi({ config: services.config, skills }).extensions });
  await services.workspace.namespace('shared').writeFile('a.txt', 'hello');
  cleanups.push(async () => {
    await skills.close();
    await temp.cleanup();
  });
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function agent(name: string, permissions: Partial<Permissions>): Promise<Agent> {
  const full: Permissions = { ...services.config.defaultPermissions, ...permissions };
  const mcp = await connectInMemory(services, { sessionId: `${name}-session`, name, workspaceNamespace: 'shared', permissions: full });
  cleanups.push(mcp.close);
  return { name, workspaceNamespace: 'shared', permissions: full, mcp, identity: { agent: name, sessionId: `${name}-session`, workspaceNamespace: 'shared', permissions: full } };
}

function mcpTool(tool: string, args: Record<string, unknown>): Surface {
  return {
    name: `MCP tool ${tool}`,
    action: tool,
    async ask(a) {
      const result = await a.mcp.client.callTool({ name: tool, arguments: args });
      return result.isError === true && /^permission denied/.test(textOf(result)) ? { refused: true, text: textOf(result) } : { refused: false };
    },
  };
}

function hostMethod(method: string, args: unknown[], action = method): Surface {
  return {
    name: `sandbox ${method}`,
    action,
    async ask(a) {
      try {
        await host.call(method, args, { identity: a.identity, language: 'javascript', signal: new AbortController().signal, account: () => undefined });
        return { refused: false };
      } catch (err) {
        // The guest sees the refusal as the one adapter shows it (the executor applies it).
        const seen = adaptError(err);
        if (seen.code === 'PERMISSION_DENIED') return { refused: true, text: seen.message, guestName: seen.guest };
        return { refused: false }; // failed for another reason (e.g. a closed port): the check passed
      }
    },
  };
}

function httpMetrics(): Surface {
  const action = "/metrics (every agent's figures)";
  return {
    name: 'HTTP GET /metrics (403)',
    action,
    ask: (a) => {
      const denied = metricsDenied({ name: a.name, workspaceNamespace: a.workspaceNamespace, permissions: a.permissions });
      return Promise.resolve(denied === null ? { refused: false } : { refused: true, text: denied });
    },
  };
}

const ROWS: Row[] = [
  {
    request: 'write a workspace file',
    resource: { kind: 'workspace', needs: 'read-write' },
    low: { workspace: 'read' },
    high: { workspace: 'read-write' },
    surfaces: [mcpTool('write_workspace_file', { filename: 'w.txt', content: 'x' }), mcpTool('delete_workspace_file', { filename: 'w.txt' }), hostMethod('write_file', ['w.txt', 'x']), hostMethod('delete_file', ['w.txt'])],
  },
  {
    request: 'read a workspace file',
    resource: { kind: 'workspace', needs: 'read' },
    low: { workspace: 'none' },
    high: { workspace: 'read' },
    surfaces: [mcpTool('read_workspace_file', { filename: 'a.txt' }), mcpTool('list_workspace_files', {}), hostMethod('read_file', ['a.txt']), hostMethod('list_files', ['.'])],
  },
  {
    request: 'save a skill',
    resource: { kind: 'skills', needs: 'read-write' },
    low: { skills: 'read' },
    high: { skills: 'read-write' },
    surfaces: [mcpTool('save_skill', { name: 'double', code: 'export function double(x) { return 2 * x }' }), hostMethod('save_skill', ['double', 'export function double(x) { return 2 * x }', '', null])],
  },
  {
    request: 'list skills',
    resource: { kind: 'skills', needs: 'read' },
    low: { skills: 'none' },
    high: { skills: 'read' },
    surfaces: [mcpTool('list_skills', {}), hostMethod('list_skills', [])],
  },
  {
    request: 'fetch a host',
    resource: { kind: 'net', host: '127.0.0.1', port: '9', target: '127.0.0.1:9' },
    low: { net: [] },
    high: { net: ['127.0.0.1:9'] },
    surfaces: [hostMethod('fetch', ['http://127.0.0.1:9/'])],
  },
  {
    request: "read every agent's figures",
    resource: { kind: 'operator' },
    low: { operator: false },
    high: { operator: true },
    surfaces: [httpMetrics()],
  },
];

describe.each(ROWS)('$request', (row) => {
  it('refuses the agent one level short on every surface, with the access check message for that action', async () => {
    const low = await agent(`low-${row.resource.kind}`, row.low);
    for (const surface of row.surfaces) {
      const expected = decide(low, surface.action, row.resource);
      expect(expected, surface.name).toBeInstanceOf(PermissionDenied);
      const answer = await surface.ask(low);
      expect(answer, surface.name).toMatchObject({ refused: true });
      if (!answer.refused) continue;
      // /metrics adds where an agent sees its own figures; everything else is the check's text as is.
      expect(answer.text.startsWith((expected as PermissionDenied).message), `${surface.name}: ${answer.text}`).toBe(true);
      if (surface.name.startsWith('sandbox')) expect(answer.guestName, surface.name).toBe('PermissionError');
    }
  });

  it('lets the agent with the permission through on every surface', async () => {
    const high = await agent(`high-${row.resource.kind}`, row.high);
    for (const surface of row.surfaces) expect(await surface.ask(high), surface.name).toEqual({ refused: false });
  });
});

describe('MCP resources', () => {
  it('are offered only to an agent the check allows to read them', async () => {
    const none = await agent('no-access', { workspace: 'none', skills: 'none' });
    const reader = await agent('reader', { workspace: 'read', skills: 'read' });
    await expect(none.mcp.client.readResource({ uri: 'workspace://a.txt' })).rejects.toThrow();
    const read = await reader.mcp.client.readResource({ uri: 'workspace://a.txt' });
    expect(read.contents[0]).toMatchObject({ text: 'hello' });
  });
});
