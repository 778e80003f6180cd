// Workspace files and skills as MCP resources (`workspace://{+path}`, `skill://{name}`), for
// clients that show or attach resources. They honour the agent's permissions exactly as the tools
// do: an agent without the workspace permission gets no workspace resources at all, and reads go
// through the same requireAccess and the same PII boundary as read_workspace_file.

import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { SkillCaller, SkillLanguage, SkillRepository } from '../skills/index.js';
import { adaptError } from '../util/daemon-error.js';
import type { ToolContext } from './define-tool.js';
import { allows } from '../access/index.js';
import { grantedWorkspace, requireSkills } from './permissions.js';

/** Most workspace files resources/list returns (sorted first); the rest stay readable by URI. */
export const MAX_LISTED_WORKSPACE_FILES = 500;
/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;

const SKILL_MIME: Readonly<Record<SkillLanguage, string>> = { javascript: 'text/javascript', typescript: 'text/x-typescript', python: 'text/x-python' };

export function registerResources(server: McpServer, ctx: ToolContext): void {
  const { agent } = ctx.session;
  if (allows(agent, { kind: 'workspace', needs: 'read' })) registerWorkspaceResources(server, ctx);
  const { skills } = ctx.services;
  if (skills && allows(agent, { kind: 'skills', needs: 'read' })) registerSkillResources(server, ctx, skills);
}

function registerWorkspaceResources(server: McpServer, ctx: ToolContext): void {
  const { services, session } = ctx;
  const view = (action: string) => grantedWorkspace(services.workspace, session.agent, action, 'read');
  server.registerResource(
    'workspace',
    new ResourceTemplate('workspace://{+path}', {
      list: async () => {
        const files = await guarded(() => view('resources/list').listFiles('.'));
        const resources: Resource[] = files.slice(0, MAX_LISTED_WORKSPACE_FILES).map((file) => ({ uri: `workspace://${encodePath(file)}`, name: file, mimeType: mimeOf(file) }));
        return { resources };
      },
    }),
    { title: 'Workspace file', description: 'A text file in your workspace namespace (what read_workspace_file returns).' },
    async (uri, variables): Promise<ReadResourceResult> => {
      const file = decodePath(variable(variables, 'path'));
      const { content } = await guarded(() => {
        return view('resources/read').readFile(file);
      });
      return { contents: [{ uri: uri.href, mimeType: mimeOf(file), text: await services.boundary.outgoingText(content, session) }] };
    },
  );
}

function registerSkillResources(server: McpServer, ctx: ToolContext, skills: SkillRepository): void {
  const { agent } = ctx.session;
  // The same caller as the skill tools: another agent's private skill is not there at all.
  const caller: SkillCaller = { agent: agent.name, agentsConfigured: ctx.services.config.agents.length > 0 };
  server.registerResource(
    'skill',
    new ResourceTemplate('skill://{name}', {
      list: async () => {
        const { skills: listed } = await guarded(() => skills.list(caller));
        const resources: Resource[] = listed.map((s) => ({ uri: `skill://${s.name}`, name: s.name, description: s.description, mimeType: SKILL_MIME[s.language] ?? 'text/plain' }));
        return { resources };
      },
    }),
    { title: 'Skill', description: 'The code of a saved skill (what load_skill returns).' },
    async (uri, variables): Promise<ReadResourceResult> => {
      const name = decodePath(variable(variables, 'name'));
      const loaded = await guarded(() => {
        requireSkills(agent, 'read', 'resources/read');
        return skills.load(name, caller);
      });
      return { contents: [{ uri: uri.href, mimeType: SKILL_MIME[loaded.metadata.language] ?? 'text/plain', text: loaded.code }] };
    },
  );
}

function variable(variables: Variables, name: string): string {
  const value = variables[name];
  const text = Array.isArray(value) ? value.join('/') : value;
  if (text === undefined || text === '') throw rpcError(ErrorCode.InvalidParams, `the resource URI has no ${name}`);
  return text;
}

/** Each segment percent-encoded, the slashes kept: `workspace://data/my%20file.json`. */
function encodePath(file: string): string {
  return file.split('/').map(encodeURIComponent).join('/');
}

function decodePath(text: string): string {
  try {
    return text.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw rpcError(ErrorCode.InvalidParams, `the resource path "${text.slice(0, 200)}" is not validly percent-encoded`);
  }
}

function mimeOf(file: string): string {
  const ext = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
  const known: Partial<Record<string, string>> = { json: 'application/json', md: 'text/markdown', csv: 'text/csv', js: 'text/javascript', ts: 'text/x-typescript', py: 'text/x-python', html: 'text/html', xml: 'application/xml', yaml: 'application/yaml', yml: 'application/yaml' };
  return known[ext] ?? 'text/plain';
}

/**
 * A JSON-RPC error with this code and exactly this message. The SDK's McpError puts "MCP error
 * CODE: " in its message, the server sends that message on, and the client's McpError adds the
 * prefix again ("MCP error -32602: MCP error -32602: ..."); the server needs only `code` and `message`.
 */
function rpcError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/** Runs a read, turning the subsystems' refusals into JSON-RPC errors that say what to do. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const adapted = adaptError(error);
    if (!adapted.daemon) throw error;
    // As JSON-RPC: the access check's refusal, a resource that is not there (its row's 404), or bad params.
    if (adapted.code === 'PERMISSION_DENIED') throw rpcError(ErrorCode.InvalidRequest, adapted.message);
    if (adapted.code === 'NOT_FOUND') throw rpcError(RESOURCE_NOT_FOUND, `${adapted.message}; resources/list shows the workspace files that exist`);
    throw rpcError(adapted.http === 404 ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, adapted.message);
  }
}
