// save_skill, load_skill, list_skills, delete_skill over the shared skill store, gated by the
// agent's `skills` permission.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { SKILL_LANGUAGES, isSkillError } from '../../skills/index.js';
import type { SkillLanguage, SkillStore } from '../../skills/index.js';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { requireAccess } from '../permissions.js';
import { args, oneOf, text } from '../schema-helpers.js';
import { ToolFailure } from '../tool-result.js';

const NAME_HINT = 'skill name: letters, digits, _ and -, starting with a letter or _';

export function registerSkillTools(server: McpServer, ctx: ToolContext, skills: SkillStore): void {
  const agent = ctx.session.agent;

  defineTool(
    server,
    ctx,
    'save_skill',
    {
      title: 'Save skill',
      description:
        'Save working code as a reusable skill (skills/NAME/ with the code and a SKILL.md). Replaces a skill of the same name. Code that does not compile is refused with the compiler message. Use it later from execute_code with import_skill(name) or load_skill(name).',
      input: args('save_skill', {
        name: text('name', NAME_HINT, { max: 128 }),
        code: text('code', 'the skill source: functions to export (JavaScript/TypeScript `export`s, or plain top-level functions)'),
        description: text('description', 'what the skill does, one or two sentences', { allowEmpty: true }).optional(),
        language: oneOf('language', SKILL_LANGUAGES as unknown as readonly [string, ...string[]], 'language of the code; detected when absent').optional(),
      }),
      output: z.looseObject({ success: z.boolean(), name: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name, code, description, language }) => {
      requireAccess(agent, 'skills', 'read-write', 'save_skill');
      const saved = await guard(() =>
        skills.save({ name, code, ...(description !== undefined ? { description } : {}), ...(language !== undefined ? { language: language as SkillLanguage } : {}) }),
      );
      // The folder on the host is not the agent's business.
      const { path: _path, ...result } = saved;
      return { result: result as unknown as Record<string, unknown> };
    },
  );

  defineTool(
    server,
    ctx,
    'load_skill',
    {
      title: 'Load skill',
      description: 'The code and metadata of a saved skill.',
      input: args('load_skill', { name: text('name', NAME_HINT, { max: 128 }) }),
      output: z.looseObject({ name: z.string(), code: z.string(), metadata: z.looseObject({}) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ name }) => {
      requireAccess(agent, 'skills', 'read', 'load_skill');
      return { result: (await guard(() => skills.load(name))) as unknown as Record<string, unknown> };
    },
  );

  defineTool(
    server,
    ctx,
    'list_skills',
    {
      title: 'List skills',
      description: 'Every saved skill: name, description, language, exports and last update.',
      input: args('list_skills', {}),
      output: z.looseObject({ count: z.number(), skills: z.array(z.looseObject({ name: z.string() })) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      requireAccess(agent, 'skills', 'read', 'list_skills');
      return { result: (await guard(() => skills.list())) as unknown as Record<string, unknown> };
    },
  );

  defineTool(
    server,
    ctx,
    'delete_skill',
    {
      title: 'Delete skill',
      description: 'Delete a saved skill.',
      input: args('delete_skill', { name: text('name', NAME_HINT, { max: 128 }) }),
      output: z.looseObject({ success: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ name }) => {
      requireAccess(agent, 'skills', 'read-write', 'delete_skill');
      return { result: (await guard(() => skills.delete(name))) as unknown as Record<string, unknown> };
    },
  );
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isSkillError(error)) {
      const invalid = ['INVALID_NAME', 'INVALID_ARGUMENT', 'CODE_TOO_LARGE', 'SYNTAX_ERROR'].includes(error.code);
      throw new ToolFailure(error.code, error.message, invalid ? 'invalid' : 'error');
    }
    throw error;
  }
}
