// save_skill, load_skill, list_skills, delete_skill over the shared skill store, gated by the
// agent's `skills` permission. With agents configured, each call acts as the session's agent: it
// sees its own skills, published ones and the operator's library, and changes only its own.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SKILL_LANGUAGES } from '../../skills/index.js';
import type { SkillCaller, SkillLanguage, SkillRepository } from '../../skills/index.js';
import { defineTool, plain } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { requireSkills } from '../permissions.js';
import { args, oneOf, text } from '../schema-helpers.js';

const NAME_HINT = 'letters, digits, _ and -, starting with a letter or _';

export function registerSkillTools(server: McpServer, ctx: ToolContext, skills: SkillRepository): void {
  const agent = ctx.session.agent;
  const agentsConfigured = ctx.services.config.agents.length > 0;
  const caller: SkillCaller = { agent: agent.name, agentsConfigured };

  defineTool(
    server,
    ctx,
    'save_skill',
    {
      title: 'Save skill',
      description:
        'Save working code as a reusable skill (replaces yours of that name; must compile). Code uses it with import_skill(name) or load_skill(name).' +
        (agentsConfigured ? ' Private to you unless shared: true.' : ''),
      input: args('save_skill', {
        name: text('name', NAME_HINT, { max: 128 }),
        code: text('code', '`export`ed or top-level functions'),
        description: text('description', 'what it does', { allowEmpty: true }).optional(),
        language: oneOf('language', SKILL_LANGUAGES, 'detected when absent').optional(),
        shared: z
          .boolean({ error: 'shared must be true or false' })
          .describe('publish to every agent (needs skills permission "publish")')
          .optional(),
      }),
      output: z.looseObject({ success: z.boolean(), name: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name, code, description, language, shared }) => {
      requireSkills(agent, 'read-write', 'save_skill');
      if (shared === true && agentsConfigured) requireSkills(agent, 'publish', 'save_skill with shared: true (publishing to every agent)');
      const saved = await skills.save(
        { name, code, ...(description !== undefined ? { description } : {}), ...(language !== undefined ? { language: language as SkillLanguage } : {}), shared: shared === true },
        caller,
      );
      // The folder on the host is not the agent's business.
      const { path: _path, ...result } = saved;
      return { result };
    },
  );

  defineTool(
    server,
    ctx,
    'load_skill',
    {
      title: 'Load skill',
      description: "A saved skill's code and metadata.",
      input: args('load_skill', { name: text('name', 'skill name', { max: 128 }) }),
      output: z.looseObject({ name: z.string(), code: z.string(), metadata: z.looseObject({}) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ name }) => {
      requireSkills(agent, 'read', 'load_skill');
      return { result: plain(await skills.load(name, caller)) };
    },
  );

  defineTool(
    server,
    ctx,
    'list_skills',
    {
      title: 'List skills',
      description: 'The saved skills you can use, with their metadata.',
      input: args('list_skills', {}),
      output: z.looseObject({ count: z.number(), skills: z.array(z.looseObject({ name: z.string() })) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      requireSkills(agent, 'read', 'list_skills');
      return { result: plain(await skills.list(caller)) };
    },
  );

  defineTool(
    server,
    ctx,
    'delete_skill',
    {
      title: 'Delete skill',
      description: 'Delete a skill you saved.',
      input: args('delete_skill', { name: text('name', 'skill name', { max: 128 }) }),
      output: z.looseObject({ success: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name }) => {
      requireSkills(agent, 'read-write', 'delete_skill');
      return { result: await skills.delete(name, caller) };
    },
  );
}

