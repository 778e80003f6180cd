// An in-process transport between the stateless handler and one agent's MCP server: each request
// gets an id of its own (so ids of different clients never meet), its answer goes back to its
// caller, and the notifications related to it (by the SDK's relatedRequestId) go to its sink.

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

export type NotificationSink = (notification: JSONRPCNotification) => void;

export class Loopback implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #waiting = new Map<string, { settle: (message: JSONRPCMessage) => void; sink: NotificationSink | undefined }>();
  #next = 0;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('method' in message) {
      if ('id' in message) return; // a request to the client: the stateless revision has no channel for them
      const related = options?.relatedRequestId;
      if (related !== undefined) this.#waiting.get(String(related))?.sink?.(message);
      return;
    }
    if (!('id' in message) || message.id === undefined) return;
    const waiter = this.#waiting.get(String(message.id));
    if (!waiter) return;
    this.#waiting.delete(String(message.id));
    waiter.settle(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  /**
   * Sends `message` to the server under an id of its own and resolves with the answer (under the
   * caller's id). `onCancel` receives the function that cancels it: the server is told
   * (notifications/cancelled), and the caller gets a -32800 answer.
   */
  request(message: JSONRPCRequest, sink: NotificationSink | undefined, onCancel: (cancel: () => void) => void): Promise<JSONRPCMessage> {
    const id = `stateless-${++this.#next}`;
    const answer = new Promise<JSONRPCMessage>((settle) => this.#waiting.set(id, { settle, sink }));
    onCancel(() => {
      const waiter = this.#waiting.get(id);
      if (!waiter) return;
      this.#waiting.delete(id);
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client cancelled the request' } });
      waiter.settle({ jsonrpc: '2.0', id, error: { code: -32800, message: 'Request cancelled: the client cancelled the request' } });
    });
    this.onmessage?.({ ...message, id });
    return answer.then((reply) => ({ ...reply, id: message.id }) as JSONRPCMessage);
  }
}
