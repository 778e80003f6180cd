// Embedded stdio (`stdio` without --connect): one stdio transport, each incoming message routed by
// classify(). The session revision goes to the connection's own MCP server, as the SDK speaks it;
// a stateless (2026-07-28) request goes to the StatelessHandler, the same one HTTP uses, so it
// gets the same answer and the same notifications. stdio has no headers: _meta alone carries the
// version. A stateless request is cancelled with notifications/cancelled naming its id.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from '../create-server.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';
import type { ObservedTransport } from '../observed-transport.js';
import { classify } from './revision.js';
import { StatelessHandler } from './stateless-handler.js';

export class StdioFront {
  readonly #stdio: Transport;
  readonly #session: McpSession;
  readonly #agent: AgentIdentity;
  readonly #stateless: StatelessHandler;
  /** Stateless requests being answered, by the client's id: how to cancel each. */
  readonly #cancels = new Map<RequestId, () => void>();
  /** The session revision's side of the connection: what the session's server is connected to. */
  readonly #channel: Transport;

  constructor(services: McpServices, session: McpSession, stdio: Transport, agent: AgentIdentity) {
    this.#stdio = stdio;
    this.#session = session;
    this.#agent = agent;
    this.#stateless = new StatelessHandler(services, 'stdio');
    this.#channel = { start: () => stdio.start(), close: () => stdio.close(), send: (message, options) => stdio.send(message, options) };
    stdio.onmessage = (message, extra) => this.#route(message, extra);
    stdio.onclose = () => this.#channel.onclose?.();
    stdio.onerror = (error) => this.#channel.onerror?.(error);
  }

  /** Starts reading stdin; the session's observing transport (its drain answers what it cancels). */
  connect(): Promise<ObservedTransport> {
    return this.#session.connect(this.#channel);
  }

  /** Waits until neither revision has a request being answered, at most `ms`. */
  async waitIdle(ms: number): Promise<boolean> {
    const [session, stateless] = await Promise.all([this.#session.requests.waitIdle(ms), this.#stateless.waitIdle(ms)]);
    return session && stateless;
  }

  /** Answers the stateless requests still open with an error carrying `text`. */
  answerOpen(text: string): Promise<number> {
    return this.#stateless.answerOpen(text);
  }

  close(): Promise<void> {
    return this.#stateless.close();
  }

  #route(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message && message.method === 'notifications/cancelled') {
      const cancel = this.#cancels.get(message.params?.['requestId'] as RequestId);
      if (cancel) return cancel();
    }
    if (classify(message) === 'session') return this.#channel.onmessage?.(message, extra);
    const request = message as unknown as Record<string, unknown>;
    const id = request['id'] as RequestId | undefined;
    void this.#stateless
      .answer(request, this.#agent, { notify: (note) => void this.#write(note), onCancel: (cancel) => id !== undefined && this.#cancels.set(id, cancel) })
      .then((answer) => answer && this.#write(answer.message))
      .finally(() => id !== undefined && this.#cancels.delete(id));
  }

  #write(message: JSONRPCMessage): Promise<void> {
    // A client that went away is not an error of the call.
    return this.#stdio.send(message).catch(() => undefined);
  }
}
