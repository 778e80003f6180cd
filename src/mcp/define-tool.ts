// Registers one tool with the wrapping every tool shares: one log line and metric per call,
// in-flight tracking for graceful shutdown, and failures turned into `isError` results whose
// message says what to do. Tool modules only write the happy path and throw ToolFailure.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { RequestId, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { PermissionDenied } from '../access/index.js';
import { StoreError } from '../util/store-error.js';
import { WorkspaceError } from '../workspace/index.js';
import type { CallOutcome } from './call-outcome.js';
import type { McpServices, SessionInfo } from './mcp-types.js';
import type { SessionLog } from './session-log.js';
import { inProfile } from './tool-list.js';
import type { ToolListing } from './tool-list.js';
import { ToolFailure, errorResult, jsonResult } from './tool-result.js';

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

export interface ToolResponse {
  /** The JSON returned as structuredContent and as the text block. */
  result: Record<string, unknown>;
  /** The call failed but still returns its JSON (execute_code when the code fails). */
  isError?: boolean;
  outcome?: CallOutcome;
  errorCode?: string;
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
  handler: (args: z.output<I>, extra: ToolExtra) => Promise<ToolResponse>,
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
        const failure = toFailure(name, error);
        outcome = failure.outcome;
        errorCode = failure.code;
        if (outcome === 'internal') services.logger.error({ err: error, tool: name, agent: session.agent.name }, 'tool failed unexpectedly');
        return errorResult(failure.message);
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

const WORKSPACE_HINTS: Partial<Record<string, string>> = {
  NOT_FOUND: 'call list_workspace_files to see the files that exist',
  PATH_OUTSIDE: 'use a path relative to your workspace, without ".." or absolute paths',
  PATH_INVALID: 'use a relative path such as "data/input.json"',
  TOO_LARGE: 'split the data into smaller files, or process it inside execute_code',
  IS_DIRECTORY: 'pass a file name, or use list_workspace_files for a folder',
};

function toFailure(tool: string, error: unknown): ToolFailure {
  if (error instanceof ToolFailure) return error;
  // The access check's refusal: the same text on every surface.
  if (error instanceof PermissionDenied) return new ToolFailure(error.code, error.message, 'denied');
  if (error instanceof WorkspaceError) {
    const hint = WORKSPACE_HINTS[error.code];
    const outcome: CallOutcome = error.code === 'PATH_OUTSIDE' ? 'denied' : 'error';
    return new ToolFailure(error.code, `${tool} failed: ${error.message}${hint ? `; ${hint}` : ''}`, outcome);
  }
  // The shared store (Redis) is down or refused: its message says what and that it comes back.
  if (error instanceof StoreError) return new ToolFailure(error.code, `${tool} failed: ${error.message}`, 'error');
  const message = error instanceof Error ? error.message : String(error);
  return new ToolFailure('INTERNAL', `${tool} failed because of an internal error (${message}); the daemon logged it. Retry, and report it if it persists.`, 'internal');
}
