// The MCP logging capability (a session hears of its own calls only, at the level it set) and
// workspace files and skills as resources, under the agent's permissions exactly like the tools.
// Real McpServer, Workspace and SkillStore, the SDK client over linked in-memory transports.

import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Permissions } from '../../src/config/config-types.js';
import type { McpServices } from '../../src/mcp/mcp-types.js';
import { buildServices, connectInMemory } from '../fixtures/mcp/harness.js';
import { makeStore, makeTempDir } from '../skills/helpers.js';

type Connected = Awaited<ReturnType<typeof connectInMemory>>;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function services(): Promise<McpServices> {
  const built = await buildServices();
  const temp = await makeTempDir();
  const skills = makeStore(temp.dir);
  await skills.start();
  built.services.skills = skills;
  cleanups.push(async () => {
    await skills.close();
    await temp.cleanup();
  });
  return built.services;
}

async function agent(shared: McpServices, name: string, permissions: Partial<Permissions> = {}, namespace = name): Promise<Connected> {
  const connected = await connectInMemory(shared, {
    sessionId: `${name}-${Math.random().toString(36).slice(2)}`,
    name,
    workspaceNamespace: namespace,
    permissions: { ...shared.config.defaultPermissions, ...permissions },
  });
  cleanups.push(connected.close);
  return connected;
}

function collectLogs(client: Client): LoggingMessageNotification['params'][] {
  const seen: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(n.params));
  return seen;
}

describe('logging capability', () => {
  it('declares logging; setLevel is per session and a session hears only of its own calls', async () => {
    const shared = await services();
    const alice = await agent(shared, 'alice');
    const bob = await agent(shared, 'bob');
    expect(alice.client.getServerCapabilities()?.logging).toEqual({});
    const aliceLogs = collectLogs(alice.client);
    const bobLogs = collectLogs(bob.client);
    await alice.client.setLoggingLevel('debug');

    await bob.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'b.txt', content: 'bob' } });
    await alice.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'a.txt', content: 'alice' } });
    await alice.client.callTool({ name: 'read_workspace_file', arguments: { filename: 'missing.txt' } });

    const events = aliceLogs.map((l) => [l.level, (l.data as { event: string; tool: string }).event, (l.data as { tool: string }).tool]);
    expect(events).toEqual([
      ['debug', 'call_started', 'write_workspace_file'],
      ['info', 'call_finished', 'write_workspace_file'],
      ['debug', 'call_started', 'read_workspace_file'],
      ['warning', 'call_failed', 'read_workspace_file'],
    ]);
    expect(aliceLogs[3]?.data).toMatchObject({ outcome: 'error', error_code: 'NOT_FOUND' });
    // bob never set a level: he hears of failures only, and nothing of alice
    expect(bobLogs).toEqual([]);
    await bob.client.callTool({ name: 'read_workspace_file', arguments: { filename: 'nope.txt' } });
    expect(bobLogs.map((l) => l.level)).toEqual(['warning']);
    expect(aliceLogs).toHaveLength(4);
  });

  it('a higher level silences what is below it', async () => {
    const shared = await services();
    const alice = await agent(shared, 'alice');
    const logs = collectLogs(alice.client);
    await alice.client.setLoggingLevel('error');
    await alice.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'a.txt', content: 'x' } });
    await alice.client.callTool({ name: 'read_workspace_file', arguments: { filename: 'missing.txt' } });
    expect(logs).toEqual([]);
  });
});

describe('resources', () => {
  it('lists and reads the caller own workspace files and the skills, with templates', async () => {
    const shared = await services();
    const alice = await agent(shared, 'alice');
    const bob = await agent(shared, 'bob');
    await alice.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'data/my file.json', content: '{"a":1}' } });
    await bob.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'secret.txt', content: 'bob only' } });
    await alice.client.callTool({ name: 'save_skill', arguments: { name: 'double', code: 'export function double(x) { return x * 2 }', description: 'doubles' } });

    const templates = await alice.client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(['skill://{name}', 'workspace://{+path}']);

    const listed = await alice.client.listResources();
    const uris = listed.resources.map((r) => r.uri);
    expect(uris).toContain('workspace://data/my%20file.json');
    expect(uris).toContain('skill://double');
    expect(uris.some((u) => u.includes('secret'))).toBe(false);

    const file = await alice.client.readResource({ uri: 'workspace://data/my%20file.json' });
    expect(file.contents[0]).toMatchObject({ mimeType: 'application/json', text: '{"a":1}' });
    const skill = await alice.client.readResource({ uri: 'skill://double' });
    expect(skill.contents[0]).toMatchObject({ mimeType: 'text/javascript', text: expect.stringContaining('export function double') });

    // another namespace is out of reach, as with read_workspace_file
    await expect(alice.client.readResource({ uri: 'workspace://../bob/secret.txt' })).rejects.toThrow(/outside|\.\./);
    await expect(alice.client.readResource({ uri: 'workspace://nothing-here.txt' })).rejects.toMatchObject({ code: -32002 });
    // One "MCP error CODE:" prefix (the client's), not two.
    for (const uri of ['workspace://nothing-here.txt', 'workspace://../bob/secret.txt', 'workspace://bad%zz', 'skill://no-such-skill', 'nope://x']) {
      const err = (await alice.client.readResource({ uri }).catch((e: unknown) => e)) as Error;
      expect(err.message, uri).toMatch(/^MCP error -?\d+: (?!MCP error)/);
    }
  });

  it('an agent without the workspace permission gets no workspace resources; without skills, no skills', async () => {
    const shared = await services();
    const owner = await agent(shared, 'owner');
    await owner.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'note.txt', content: 'hi' } });
    await owner.client.callTool({ name: 'save_skill', arguments: { name: 'greet', code: 'export const greet = () => "hi"' } });

    const blind = await agent(shared, 'blind', { workspace: 'none' }, 'owner');
    const listed = await blind.client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual(['skill://greet']);
    await expect(blind.client.readResource({ uri: 'workspace://note.txt' })).rejects.toThrow(/not found/i);

    const noSkills = await agent(shared, 'reader', { workspace: 'read', skills: 'none' }, 'owner');
    expect((await noSkills.client.listResources()).resources.map((r) => r.uri)).toEqual(['workspace://note.txt']);
    await expect(noSkills.client.readResource({ uri: 'skill://greet' })).rejects.toThrow(/not found/i);
  });
});
