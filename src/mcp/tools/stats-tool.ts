// get_execution_stats: what a caller needs to see of the daemon. Every agent sees its own figures
// (its calls by outcome and tool, its execute_code latency, its workspace), the limits and the
// capabilities; figures that show other agents' activity (everyone's counters, pool activity,
// sessions, vaults, upstream call counts) are the operator's only (`permissions.operator`).
// Figures only; no code, data or PII.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { allows, decide, Grant } from '../../access/index.js';
import { piiHelperStats } from '../../pii/index.js';
import { catalogViewer } from '../../sandbox-api/catalog-access.js';
import { toolAllowed } from '../../sandbox-api/permissions.js';
import { defineTool } from '../define-tool.js';
import type { ToolContext } from '../define-tool.js';
import { args } from '../schema-helpers.js';
import { workspaceView } from '../../workspace/index.js';
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
        'Your calls, latency, workspace, limits and capabilities; the operator also gets daemon-wide pool, catalog, skills, PII and upstream figures.',
      input: args('get_execution_stats', {}),
      output: z.looseObject({
        scope: z.enum(['agent', 'daemon']),
        workspace: z.looseObject({}),
        pool: z.looseObject({}),
        calls: z.looseObject({}),
        limits: z.looseObject({}),
        capabilities: z.looseObject({}),
        server: z.looseObject({}),
        // The operator's daemon-wide sections (skills, catalog, pii, upstream, context_savings) pass
        // through the loose object; the listing names only what every caller gets.
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      const { config, recorder } = services;
      const agent = session.agent;
      const operator = allows(agent, { kind: 'operator' });
      const pool = services.executor.stats();
      const read = decide(agent, 'get_execution_stats', { kind: 'workspace', needs: 'read' });
      const workspace =
        read instanceof Grant
          ? { namespace: agent.workspaceNamespace, access: agent.permissions.workspace, ...(await workspaceView(services.workspace, read).stats()) }
          : { namespace: agent.workspaceNamespace, access: 'none' };
      const byTool = (who?: string): Record<string, Record<string, number>> => {
        const out: Record<string, Record<string, number>> = {};
        for (const { tool, outcome, count } of recorder.calls(who)) (out[tool] ??= {})[outcome] = count;
        return out;
      };
      const mine = { agent: agent.name, by_outcome: recorder.byOutcome(agent.name), by_tool: byTool(agent.name), execute_latency: recorder.agentLatency(agent.name) };
      const everyone = Object.fromEntries(recorder.agents().map((name) => [name, recorder.byOutcome(name)]));
      const extra = operator ? await operatorStats(ctx) : agentStats(ctx);
      const result = {
        scope: operator ? ('daemon' as const) : ('agent' as const),
        workspace,
        // Capacity is no one's activity; the rest of the pool's figures is everyone's.
        pool: operator
          ? {
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
              direct_calls: pool.direct_calls,
              latency: pool.latency,
              by_outcome: pool.by_outcome,
            }
          : { processes: pool.processes, threads: pool.threads },
        calls: operator ? { by_outcome: recorder.byOutcome(), by_tool: byTool(), in_flight: recorder.inFlight, by_agent: everyone, mine } : { ...mine },
        // running totals of the tokens code kept out of the conversation (every agent's)
        ...(operator && pool.context_savings ? { context_savings: pool.context_savings } : {}),
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
          upstream_servers: Object.keys(config.mcpServers).filter((name) => operator || serverUsable(ctx, name)),
          permissions: agent.permissions,
        },
        server: {
          version: services.version,
          uptime_s: Math.round((services.now() - services.startedAtMs) / 1000),
          agent: agent.name,
          transport: session.transport,
          ...(operator && services.openSessions ? { sessions: services.openSessions() } : {}),
          // this agent's share of the shared budgets (the operator sees every agent's)
          ...(services.agentUsage ? { usage: services.agentUsage(operator ? undefined : agent.name) } : {}),
        },
        ...extra,
      };
      // This agent's share of the skill store (the operator's figures hold the store's own).
      if (!services.skills || !allows(agent, { kind: 'skills', needs: 'read' })) return { result };
      return { result: { ...result, skills: { ...(extra['skills'] as object | undefined), mine: services.skills.usage(agent.name) } } };
    },
  );
}

/** Whether the session's agent may call some tool of `server` (a server it cannot use is not named). */
function serverUsable(ctx: ToolContext, server: string): boolean {
  const permissions = ctx.session.agent.permissions;
  const tools = ctx.services.upstream?.tools(server) ?? [];
  return tools.length > 0 ? tools.some((t) => toolAllowed(permissions, server, t.name)) : toolAllowed(permissions, server, '*');
}

/** Daemon-wide figures of the subsystems that are wired (catalog, skills, PII, upstream). */
async function operatorStats(ctx: ToolContext): Promise<Record<string, unknown>> {
  const { catalog, skills, pii, upstream } = ctx.services;
  return {
    ...(skills ? { skills: skills.stats() } : {}),
    ...(catalog ? { catalog: catalog.stats() } : {}),
    ...(pii ? { pii: { ...(await pii.stats().catch(() => ({ unavailable: true }))), store: pii.kind, auto: ctx.services.config.pii.auto, helper: piiHelperStats() } } : {}),
    ...(upstream ? { upstream: upstream.status() } : {}),
  };
}

/** What an agent sees of the catalog and the upstream servers: its own view, no one's activity. */
function agentStats(ctx: ToolContext): Record<string, unknown> {
  const { catalog, upstream, config } = ctx.services;
  const out: Record<string, unknown> = {};
  if (catalog) {
    const who = { agent: ctx.session.agent.name, permissions: ctx.session.agent.permissions };
    const seen = catalog.categories(catalogViewer({ config, catalog, ...(upstream ? { upstream } : {}) }, who));
    out.catalog = { total_tools: seen.total_tools, categories: Object.keys(seen.categories).length };
  }
  if (upstream) {
    const servers: Record<string, Record<string, unknown>> = {};
    for (const [name, status] of Object.entries(upstream.status())) {
      if (!serverUsable(ctx, name)) continue;
      servers[name] = { state: status.state, tools: status.tools, transport: status.transport, ...(status.instances_mode ? { instances: status.instances_mode } : {}), ...(status.error ? { error: status.error } : {}) };
    }
    out.upstream = servers;
  }
  return out;
}
