// The other end of stateless-reply.ts: reading a stateless answer the daemon sent as an SSE
// stream, for the stdio bridge (kept apart so the bridge loads nothing of the server). The frames
// are the daemon's own (`event: message`, one `data:` line of JSON each); the SSE rules this needs
// (events end with a blank line, data lines joined, comments skipped) are followed in full.

import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';

/**
 * Reads a stateless answer sent as an SSE stream (the frames StatelessReply writes): each
 * notification goes to `onNotification` as it arrives, and the answer (the message with a result
 * or an error) is returned. Used by the stdio bridge, which relays both to its client.
 */
export async function readStatelessStream(body: ReadableStream<Uint8Array>, onNotification: (message: JSONRPCNotification) => void): Promise<JSONRPCMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let answer: JSONRPCMessage | undefined;
  const take = (event: string): void => {
    // An event's data is its `data:` lines joined by newlines (the SSE rules); comments and ids are skipped.
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data.trim() === '') return;
    const message = JSON.parse(data) as JSONRPCMessage;
    if ('result' in message || 'error' in message) answer = message;
    else if ('method' in message && !('id' in message)) onNotification(message);
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = events.pop() ?? '';
    for (const event of events) take(event);
    if (answer) break;
  }
  if (!answer && buffer.trim() !== '') take(buffer);
  if (!answer) throw new Error('the stream ended before the answer');
  return answer;
}
