// execute_code: an adapter. It hands the code to the executor, which owns the call (its language,
// the run, the result's shape), with the caller's identity, limits capped by the configuration,
// the request's abort signal (notifications/cancelled, client disconnect, session end) and, when
// the client asked for progress, a reporter that streams output lines; the result is tokenized
// on its way out when pii.auto is on.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { serverSettings } from '../../config/defaults.js';
import { codeProblem } from '../../executor/executor.js';
import { MIN_MEMORY_MB } from '../../executor/executor-types.js';
import type { ExecutionResult, Language } from '../../executor/executor-types.js';
import { defineTool, plain } from '../define-tool.js';
import type { Plain, ToolContext, ToolExtra, ToolResponse } from '../define-tool.js';
import type { CallOutcome } from '../call-outcome.js';
import { ProgressReporter } from '../progress.js';
import { args, number, oneOf, text } from '../schema-helpers.js';
import { DaemonError } from '../../util/daemon-error.js';
import { SANDBOX_API } from '../../../workers/kit/api-contract.js';

/**
 * The sandbox functions execute_code's description names, from the one table of the sandbox API
 * (each documented in the catalog's `sandbox` category); `fetch` and `tools` are named apart, with
 * their conditions.
 */
export const SANDBOX_GLOBALS = SANDBOX_API.filter((x) => x.catalog && x.name !== 'fetch')
  .map((x) => x.name)
  .join(', ');

export const LANGUAGES = ['javascript', 'typescript', 'python'] as const satisfies readonly Language[];

const OUTCOME_BY_ERROR_TYPE: Partial<Record<string, CallOutcome>> = {
  TimeoutError: 'timeout',
  MemoryLimitError: 'memory',
  CancelledError: 'cancelled',
  OverloadedError: 'overloaded',
  ValidationError: 'invalid',
  PermissionError: 'denied',
};

export const executionResultSchema = z.looseObject({
  success: z.boolean(),
  result: z.unknown(),
  output: z.array(z.string()),
  execution_time_ms: z.number(),
  error: z.string().optional(),
  error_type: z.string().optional(),
  traceback: z.string().optional(),
  truncated: z.boolean().optional(),
  preview: z.looseObject({ type: z.enum(['array', 'object', 'string']), total: z.number(), kept: z.number(), json_chars: z.number() }).optional(),
  output_file: z.string().optional(),
  language: z.enum(LANGUAGES).optional(),
});

export function registerExecuteCode(server: McpServer, ctx: ToolContext): void {
  const { services, session } = ctx;
  const { limits } = services.config;
  const python = services.config.sandbox.pythonProcesses > 0;
  const languages = python ? LANGUAGES : (['javascript', 'typescript'] as const);
  const openWorld = Object.keys(services.config.mcpServers).length > 0 || session.agent.permissions.net.length > 0;

  defineTool(
    server,
    ctx,
    'execute_code',
    {
      title: 'Execute code',
      description: [
        `Run ${python ? 'JavaScript, TypeScript or Python' : 'JavaScript or TypeScript'} in a sandbox as an async function body; \`return X\` is the result, console.log/print go to output.`,
        `Globals: ${SANDBOX_GLOBALS}, fetch (allowed hosts), tools.SERVER.TOOL(args).`,
        'Return only what you need.',
      ].join(' '),
      input: args('execute_code', {
        code: text('code', 'the code', { allowEmpty: true }),
        language: oneOf('language', languages, 'omitted: detected').optional(),
        context_vars: z
          .record(z.string(), z.unknown(), { error: 'context_vars must be an object of global names to JSON values, e.g. {"rows": [1, 2]}' })
          .optional()
          .describe('globals for the code'),
        timeout_seconds: number('timeout_seconds', 'wall-clock limit, seconds', {
          min: 0,
          exclusiveMin: true,
          max: limits.maxTimeoutSeconds,
          unit: 'seconds',
        }).default(Math.min(limits.defaultTimeoutSeconds, limits.maxTimeoutSeconds)),
        memory_mb: number('memory_mb', 'memory limit, MiB', { min: MIN_MEMORY_MB, max: limits.maxMemoryMb, integer: true, unit: 'MiB' }).default(
          Math.min(limits.defaultMemoryMb, limits.maxMemoryMb),
        ),
      }),
      output: executionResultSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: openWorld },
    },
    async (input, extra) => runCode(ctx, input, extra),
  );
}

interface ExecuteInput {
  code: string;
  language?: string | undefined;
  context_vars?: Record<string, unknown> | undefined;
  timeout_seconds: number;
  memory_mb: number;
}

async function runCode(ctx: ToolContext, input: ExecuteInput, extra: ToolExtra): Promise<ToolResponse<Plain<ExecutionResult>>> {
  const { services, session } = ctx;
  const { limits } = services.config;
  // Refused before a progress reporter or the executor is involved, in the executor's words.
  const problem = codeProblem(input.code, limits.maxCodeBytes);
  if (problem) throw new DaemonError('CODE_TOO_LARGE', problem);

  const signal = AbortSignal.any([extra.signal, session.signal]);
  const token = extra._meta?.progressToken;
  const reporter =
    token === undefined
      ? undefined
      : new ProgressReporter({
          token,
          intervalMs: serverSettings(services.config).progressIntervalMs,
          totalSeconds: input.timeout_seconds,
          send: (n) => extra.sendNotification(n),
          now: services.now,
          transformLine: (line) => services.boundary.outgoingText(line, session),
        });
  reporter?.start();
  let result: ExecutionResult;
  try {
    result = await services.executor.execute(
      {
        code: input.code,
        ...(input.language !== undefined ? { language: input.language as Language } : {}),
        ...(input.context_vars ? { contextVars: input.context_vars } : {}),
        timeoutSeconds: input.timeout_seconds,
        memoryMb: input.memory_mb,
      },
      {
        agent: session.agent.name,
        sessionId: session.sessionId,
        workspaceNamespace: session.agent.workspaceNamespace,
        permissions: session.agent.permissions,
      },
      { signal, ...(reporter ? { onOutput: (line: string) => reporter.line(line) } : {}) },
    );
  } finally {
    await reporter?.stop();
  }

  if (result.language) services.recorder.recordLanguage(result.language, result.success);
  const outgoing = services.boundary.active ? await protect(result, ctx) : result;
  const outcome: CallOutcome = result.success ? 'ok' : (OUTCOME_BY_ERROR_TYPE[result.error_type ?? ''] ?? 'error');
  return {
    result: plain(outgoing),
    isError: !result.success,
    outcome,
    ...(result.error_type ? { errorCode: result.error_type } : {}),
  };
}

/** pii.auto: tokenize every string that goes back to the model. */
async function protect(result: ExecutionResult, ctx: ToolContext): Promise<ExecutionResult> {
  const { boundary } = ctx.services;
  const s = ctx.session;
  // One value, one store round trip: the result, the output lines, the error and the traceback.
  const safe = (await boundary.outgoingValue({ result: result.result, output: result.output, error: result.error ?? null, traceback: result.traceback ?? null }, s)) as {
    result: unknown;
    output: string[];
    error: string | null;
    traceback: string | null;
  };
  return {
    ...result,
    result: safe.result,
    output: safe.output,
    ...(result.error !== undefined && safe.error !== null ? { error: safe.error } : {}),
    ...(result.traceback !== undefined && safe.traceback !== null ? { traceback: safe.traceback } : {}),
  };
}
