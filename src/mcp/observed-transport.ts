// A transport decorator that sees every tools/call go in and its answer come out. Calls that a
// tool handler ran are recorded by the handler; this catches the rest (arguments refused by the
// SDK's validation, unknown tools), so every call gets its log line and metric. It also keeps the
// promise that every request gets exactly one answer: a request reusing the id of one still open
// is refused at once, and a drain answers what it cancels before the session closes.

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { InFlight } from './in-flight.js';

const INVALID_PARAMS = -32602;
/** JSON-RPC error code of a request refused because its id is already in use in this session. */
export const DUPLICATE_ID_CODE = -32600;
/** JSON-RPC error code of a request cancelled because the daemon is shutting down. */
export const SHUTTING_DOWN_CODE = -32000;

export function duplicateIdMessage(id: RequestId): string {
  return `request id ${JSON.stringify(id)} is already used by a request of this session that has not been answered yet; give every request its own id`;
}

export interface RefusedCall {
  tool: string;
  durationMs: number;
}

/** Records a refused call; may return the message of a JSON-RPC error to answer with instead of the SDK's result. */
export type RefusedCallHandler = (call: RefusedCall) => string | undefined;

export class ObservedTransport implements Transport {
  readonly #inner: Transport;
  readonly #handled: Set<RequestId>;
  readonly #pending = new Map<RequestId, { tool: string; started: number }>();
  /** resources/read requests not answered yet: their URI, which a failure carries as data.uri. */
  readonly #reads = new Map<RequestId, string>();
  readonly #onRefused: RefusedCallHandler;
  readonly #now: () => number;
  /** Every request received and not yet answered (any method): its end-of-flight function. */
  readonly #open = new Map<RequestId, () => void>();
  /** Requests answered by a drain: the handler's late answer is dropped. */
  readonly #drained = new Set<RequestId>();
  readonly #requests: InFlight | undefined;

  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  constructor(inner: Transport, handled: Set<RequestId>, onRefused: RefusedCallHandler, now: () => number, requests?: InFlight) {
    this.#inner = inner;
    this.#requests = requests;
    this.#handled = handled;
    this.#onRefused = onRefused;
    this.#now = now;
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onclose = () => {
      this.#pending.clear();
      this.#reads.clear();
      for (const end of this.#open.values()) end();
      this.#open.clear();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  /** Deliver a message as if the client had sent it (used to cancel calls of a vanished client). */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message) {
      if ('id' in message) {
        if (this.#open.has(message.id)) {
          // Handing it on would leave one of the two without an answer for good.
          void this.#inner.send({ jsonrpc: '2.0', id: message.id, error: { code: DUPLICATE_ID_CODE, message: duplicateIdMessage(message.id) } }).catch(() => undefined);
          return;
        }
        this.#drained.delete(message.id);
        this.#open.set(message.id, this.#requests ? this.#requests.begin() : () => undefined);
      }
      if (message.method === 'tools/call' && 'id' in message) {
        const name = message.params?.['name'];
        this.#pending.set(message.id, { tool: typeof name === 'string' ? name : '?', started: this.#now() });
      } else if (message.method === 'resources/read' && 'id' in message && typeof message.params?.['uri'] === 'string') {
        this.#reads.set(message.id, message.params['uri']);
      } else if (message.method === 'notifications/cancelled') {
        const id = message.params?.['requestId'];
        if (typeof id === 'string' || typeof id === 'number') this.#forget(id);
      }
    }
    this.onmessage?.(message, extra);
  }

  /** Ids of tools/call requests not answered yet. */
  pendingCalls(): RequestId[] {
    return [...this.#pending.keys()];
  }

  /** Whether a request with this id was received and not answered yet. */
  isOpen(id: RequestId): boolean {
    return this.#open.has(id);
  }

  /**
   * Answers every request still open with a JSON-RPC error carrying `message` (a drain that ran
   * out of time), so no client waits for its own timeout; the handlers' late answers are dropped.
   */
  async answerOpen(message: string): Promise<number> {
    const ids = [...this.#open.keys()];
    await Promise.all(
      ids.map(async (id) => {
        const reply: JSONRPCMessage = { jsonrpc: '2.0', id, error: { code: SHUTTING_DOWN_CODE, message } };
        try {
          await this.send(reply);
        } catch {
          // The client is gone: nobody is waiting for this answer.
        }
        this.#drained.add(id);
      }),
    );
    return ids.length;
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    let outgoing = message;
    if (('result' in message || 'error' in message) && message.id !== undefined && this.#drained.has(message.id)) {
      this.#drained.delete(message.id);
      return Promise.resolve();
    }
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const call = this.#pending.get(message.id);
      if (call && !this.#handled.has(message.id)) {
        const replacement = this.#onRefused({ tool: call.tool, durationMs: this.#now() - call.started });
        // an unknown tool is a protocol error (-32602, as the MCP spec says), with a message that helps
        if (replacement !== undefined && 'result' in message && message.result['isError'] === true) {
          outgoing = { jsonrpc: '2.0', id: message.id, error: { code: INVALID_PARAMS, message: replacement } };
        }
      }
      // A read that failed names its resource in data.uri (SEP-2164), whichever layer refused it.
      const uri = this.#reads.get(message.id);
      if (uri !== undefined && 'error' in outgoing && outgoing.error.data === undefined) outgoing = { ...outgoing, error: { ...outgoing.error, data: { uri } } };
      this.#forget(message.id);
    }
    return this.#inner.send(withoutSdkPrefix(outgoing), options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  #forget(id: RequestId): void {
    this.#pending.delete(id);
    this.#reads.delete(id);
    this.#handled.delete(id);
    this.#open.get(id)?.();
    this.#open.delete(id);
  }
}

/**
 * An error answer without the "MCP error CODE: " the SDK's McpError writes into its message: the
 * client's McpError adds it again ("MCP error -32602: MCP error -32602: Resource ... not found").
 */
function withoutSdkPrefix(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message)) return message;
  const prefix = `MCP error ${message.error.code}: `;
  if (typeof message.error.message !== 'string' || !message.error.message.startsWith(prefix)) return message;
  return { ...message, error: { ...message.error, message: message.error.message.slice(prefix.length) } };
}
