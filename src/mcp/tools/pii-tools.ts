// sanitize_pii and restore_pii: tokens from the calling session's own vault, so a token can be
// restored only in the MCP session that made it.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { describeUnrestorable } from '../../pii/index.js';
import type { VaultOwner, VaultStore } from '../../pii/index.js';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { args, text } from '../schema-helpers.js';

export function registerPiiTools(server: McpServer, ctx: ToolContext, vaults: VaultStore): void {
  const owner: VaultOwner = { sessionId: ctx.session.sessionId, agent: ctx.session.agent.name };

  defineTool(
    server,
    ctx,
    'sanitize_pii',
    {
      title: 'Sanitize PII',
      description:
        'Replace PII (emails, phones, SSNs, cards, IPs, IBANs, secrets) with tokens like [EMAIL_3f9a1c2b]; restore_pii reverses them in this session.',
      input: args('sanitize_pii', { text: text('text', 'text', { allowEmpty: true }) }),
      output: z.looseObject({ sanitized_text: z.string(), pii_found: z.number(), pii_types: z.array(z.string()) }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ text: input }) => {
      const { text: sanitized, found, types } = await vaults.tokenize(owner, input);
      return { result: { sanitized_text: sanitized, pii_found: found, pii_types: types } };
    },
  );

  defineTool(
    server,
    ctx,
    'restore_pii',
    {
      title: 'Restore PII',
      description:
        'Put back the values of PII tokens this agent made (in any of its sessions, for pii.tokenTtlSeconds); others are left, listed in unknown_tokens with why (unknown, expired).',
      input: args('restore_pii', { text: text('text', 'text with tokens', { allowEmpty: true }) }),
      output: z.looseObject({ restored_text: z.string(), unknown_tokens: z.array(z.string()).optional() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ text: input }) => {
      const { text: restored, unknown, reasons } = await vaults.detokenize(owner, input);
      if (unknown.length === 0) return { result: { restored_text: restored } };
      const why = Object.fromEntries(unknown.map((t) => [t, reasons?.[t] ?? 'unknown']));
      return { result: { restored_text: restored, unknown_tokens: unknown, unknown_reasons: why, message: `not restored: ${describeUnrestorable(unknown, reasons)}` } };
    },
  );
}
