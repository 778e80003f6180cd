// get_execution_stats: what an agent (or its operator) needs to see the daemon's state: its own
// workspace, skills, catalog, the pool, latency percentiles, calls by outcome, limits and
// capabilities. Figures only; no code, data or PII.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { args } from '../schema-helpers.js';
import { LANGUAGES } from './execute-code.js';

export function registerStatsTool(server: McpServer, ctx: ToolContext): void {
  const { services, session } = ctx;
  defineTool(
    server,
    ctx,
    'get_execution_stats',
    {
      title: 'Execution stats',
      description:
        'Figures of this daemon: your workspace (files, bytes), skills, catalog, the sandbox pool (threads, queue, completed, failed, timeouts, latency percentiles), calls by outcome, limits and capabilities.',
      input: args('get_execution_stats', {}),
      output: z.looseObject({
        workspace: z.looseObject({}),
        pool: z.looseObject({}),
        calls: z.looseObject({}),
        limits: z.looseObject({}),
        capabilities: z.looseObject({}),
        server: z.looseObject({}),
        skills: z.looseObject({}).optional(),
        catalog: z.looseObject({}).optional(),
        pii: z.looseObject({}).optional(),
        upstream: z.record(z.string(), z.looseObject({})).optional(),
        context_savings: z.looseObject({}).optional(),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      const { config, recorder } = services;
      const agent = session.agent;
      const pool = services.executor.stats();
      const workspace =
        agent.permissions.workspace === 'none'
          ? { namespace: agent.workspaceNamespace, access: 'none' }
          : { namespace: agent.workspaceNamespace, access: agent.permissions.workspace, ...(await services.workspace.namespace(agent.workspaceNamespace).stats()) };
      const byTool: Record<string, Record<string, number>> = {};
      for (const { tool, outcome, count } of recorder.calls()) (byTool[tool] ??= {})[outcome] = count;
      const result: Record<string, unknown> = {
        workspace,
        pool: {
          processes: pool.processes,
          threads: pool.threads,
          busy: pool.busy,
          queue: pool.queued,
          completed: pool.completed,
          failed: pool.failed,
          timeouts: pool.timeouts,
          memory_kills: pool.memory_kills,
          cancelled: pool.cancelled,
          process_restarts: pool.process_restarts,
          latency: pool.latency,
          by_outcome: pool.by_outcome,
        },
        calls: { by_outcome: recorder.byOutcome(), by_tool: byTool, in_flight: recorder.inFlight },
        // running totals of the tokens code kept out of the conversation
        ...(pool.context_savings ? { context_savings: pool.context_savings } : {}),
        limits: {
          default_timeout_seconds: config.limits.defaultTimeoutSeconds,
          max_timeout_seconds: config.limits.maxTimeoutSeconds,
          default_memory_mb: config.limits.defaultMemoryMb,
          max_memory_mb: config.limits.maxMemoryMb,
          max_output_chars: config.limits.maxOutputChars,
          max_code_bytes: config.limits.maxCodeBytes,
          max_file_bytes: config.limits.maxFileBytes,
          max_fetch_bytes: config.limits.maxFetchBytes,
          max_queued_calls: config.limits.maxQueuedCalls,
        },
        capabilities: {
          languages: config.sandbox.pythonProcesses > 0 ? [...LANGUAGES] : ['javascript', 'typescript'],
          progress: true,
          cancellation: true,
          pii_auto: config.pii.auto,
          upstream_servers: Object.keys(config.mcpServers),
          permissions: agent.permissions,
        },
        server: {
          version: services.version,
          uptime_s: Math.round((services.now() - services.startedAtMs) / 1000),
          agent: agent.name,
          transport: session.transport,
          ...(services.openSessions ? { sessions: services.openSessions() } : {}),
        },
        ...(await optionalStats(ctx)),
      };
      return { result };
    },
  );
}

/** Figures of the subsystems that are wired (catalog, skills, PII). */
async function optionalStats(ctx: ToolContext): Promise<Record<string, unknown>> {
  const { catalog, skills, pii, upstream } = ctx.services;
  return {
    ...(skills ? { skills: skills.stats() } : {}),
    ...(catalog ? { catalog: catalog.stats() } : {}),
    ...(pii ? { pii: { ...pii.stats(), auto: ctx.services.config.pii.auto } } : {}),
    ...(upstream ? { upstream: upstream.status() } : {}),
  };
}
