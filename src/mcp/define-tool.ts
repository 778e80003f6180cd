// Registers one tool with the wrapping every tool shares: one log line and metric per call,
// in-flight tracking for graceful shutdown, and failures turned into `isError` results whose
// message says what to do. Tool modules only write the happy path and throw DaemonError; its
// code's row (util/daemon-error.ts) says the outcome and the hint.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { RequestId, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { adaptError, toolErrorText } from '../util/daemon-error.js';
import type { CallOutcome } from './call-outcome.js';
import type { McpServices, SessionInfo } from './mcp-types.js';
import type { SessionLog } from './session-log.js';
import { inProfile } from './tool-list.js';
import type { ToolListing } from './tool-list.js';
import { errorResult, jsonResult } from './tool-result.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a tool module needs: the shared services, the session, and the set of calls a handler saw. */
export interface ToolContext {
  services: McpServices;
  session: SessionInfo;
  /** Request ids whose call reached a handler (the rest were refused by the SDK's validation). */
  handled: Set<RequestId>;
  /** Names of the tools registered in this session. */
  names: Set<string>;
  /** The session's MCP log channel (notifications/message), when the session has one. */
  log?: SessionLog;
  /** What tools/list shows of the tools registered (src/mcp/tool-list.ts). */
  listings: ToolListing[];
}

export interface ToolResponse<R = Record<string, unknown>> {
  /** The JSON returned as structuredContent and as the text block, typed by the tool's output schema. */
  result: R;
  /** The call failed but still returns its JSON (execute_code when the code fails). */
  isError?: boolean;
  outcome?: CallOutcome;
  errorCode?: string;
}

/**
 * A domain value (declared with interfaces) seen as the plain JSON object it is: the same type
 * with every nested interface turned into an object type, so it is checked against a tool's
 * output schema (whose loose objects carry index signatures, which interfaces never satisfy).
 */
export type Plain<T> = T extends string | number | boolean | bigint | symbol | null | undefined ? T : T extends readonly (infer E)[] ? Plain<E>[] : T extends object ? { -readonly [K in keyof T]: Plain<T[K]> } : T;

/** `value` as its Plain type: the same value, no copy. */
export function plain<T>(value: T): Plain<T> {
  return value as Plain<T>;
}

export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  server: McpServer,
  ctx: ToolContext,
  name: string,
  spec: ToolSpec<I, O>,
  handler: (args: z.output<I>, extra: ToolExtra) => Promise<ToolResponse<z.output<O>>>,
): void {
  const { services, session } = ctx;
  // Outside the configured profile a tool does not exist for MCP clients (code still reaches it).
  if (!inProfile(services.config.server?.toolProfile ?? 'seed', name)) return;
  ctx.names.add(name);
  ctx.listings.push({ name, title: spec.title, description: spec.description, input: spec.input, output: spec.output, annotations: spec.annotations });
  server.registerTool(
    name,
    { title: spec.title, description: spec.description, inputSchema: spec.input, outputSchema: spec.output, annotations: { title: spec.title, ...spec.annotations } },
    (async (args: z.output<I>, extra: ToolExtra) => {
      ctx.handled.add(extra.requestId);
      ctx.log?.callStarted(name, extra.sendNotification);
      const end = services.recorder.begin();
      const started = services.now();
      let outcome: CallOutcome = 'ok';
      let errorCode: string | undefined;
      try {
        const response = await handler(args, extra);
        outcome = response.outcome ?? (response.isError ? 'error' : 'ok');
        errorCode = response.errorCode;
        return jsonResult(response.result, response.isError === true);
      } catch (error) {
        const failure = adaptError(error);
        outcome = failure.outcome;
        errorCode = failure.code;
        if (!failure.daemon) services.logger.error({ err: error, tool: name, agent: session.agent.name }, 'tool failed unexpectedly');
        return errorResult(toolErrorText(failure, name));
      } finally {
        services.recorder.record({
          agent: session.agent.name,
          session: session.sessionId,
          tool: name,
          outcome,
          duration_ms: services.now() - started,
          ...(errorCode ? { error_code: errorCode } : {}),
        });
        ctx.log?.callEnded({ tool: name, outcome, durationMs: services.now() - started, errorCode }, extra.sendNotification);
        end();
      }
    }) as Parameters<McpServer['registerTool']>[2],
  );
}
