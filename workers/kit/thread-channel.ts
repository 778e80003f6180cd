// One channel per worker thread to its pool host, made once when the thread starts, instead of a
// MessageChannel made and transferred with every task (about 100 µs of the pool host's time per
// call). Every message on it carries the id of the call it belongs to, and each side drops what
// is not for the call running now: a late host reply for an ended call never reaches the next one.

import { MessageChannel, parentPort, threadId, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { HostLinkInfo } from './protocol.js';
import { WorkerHostLink } from './host-link.js';

/** Posted to the pool host (piscina relays it as a 'message' event of the pool) at thread start. */
export interface ChannelOffer {
  kind: 'sandbox-channel';
  threadId: number;
  port: MessagePort;
}

export function isChannelOffer(m: unknown): m is ChannelOffer {
  return typeof m === 'object' && m !== null && (m as { kind?: unknown }).kind === 'sandbox-channel';
}

function open(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  parentPort?.postMessage({ kind: 'sandbox-channel', threadId, port: port2 } satisfies ChannelOffer, [port2]);
  return port1;
}

/** This thread's end of the channel. */
export const threadPort: MessagePort = open();

const linkInfo = (workerData as { hostLink?: HostLinkInfo } | null | undefined)?.hostLink;
/** This thread's link to the coordinator (every call's channel); a thread without one cannot serve (serve-link.ts). */
export const hostLink: WorkerHostLink | undefined = linkInfo ? new WorkerHostLink(linkInfo, threadId) : undefined;
