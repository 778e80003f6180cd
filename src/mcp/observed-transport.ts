// A transport decorator that sees every tools/call go in and its answer come out. Calls that a
// tool handler ran are recorded by the handler; this catches the rest (arguments refused by the
// SDK's validation, unknown tools), so every call gets its log line and metric.

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { InFlight } from './in-flight.js';

const INVALID_PARAMS = -32602;

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
  readonly #onRefused: RefusedCallHandler;
  readonly #now: () => number;
  /** Every request received and not yet answered (any method), for draining. */
  readonly #open = new Map<RequestId, () => void>();
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
      if ('id' in message && this.#requests && !this.#open.has(message.id)) this.#open.set(message.id, this.#requests.begin());
      if (message.method === 'tools/call' && 'id' in message) {
        const name = message.params?.['name'];
        this.#pending.set(message.id, { tool: typeof name === 'string' ? name : '?', started: this.#now() });
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

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    let outgoing = message;
    if (('result' in message || 'error' in message) && message.id !== undefined) {
      const call = this.#pending.get(message.id);
      if (call && !this.#handled.has(message.id)) {
        const replacement = this.#onRefused({ tool: call.tool, durationMs: this.#now() - call.started });
        // an unknown tool is a protocol error (-32602, as the MCP spec says), with a message that helps
        if (replacement !== undefined && 'result' in message && message.result['isError'] === true) {
          outgoing = { jsonrpc: '2.0', id: message.id, error: { code: INVALID_PARAMS, message: replacement } };
        }
      }
      this.#forget(message.id);
    }
    return this.#inner.send(outgoing, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  #forget(id: RequestId): void {
    this.#pending.delete(id);
    this.#handled.delete(id);
    this.#open.get(id)?.();
    this.#open.delete(id);
  }
}
