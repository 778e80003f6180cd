// A sandbox process: hosts one piscina pool of worker threads for the coordinator. It is a separate
// process because some allocations make V8 abort the whole process (fatal OOM); when that happens
// only this process and its calls die, and the coordinator starts another. Its main thread only
// supervises: it starts the threads, relays their synchronous host calls, stops a call that must
// stop, watches memory, recycles, and answers for a call whose thread it ended
// (thread-supervisor.ts). Calls themselves go between the coordinator and each thread over the
// thread's own link (serve-link.ts). What differs between runtimes is the strategy their row names
// (runtime-strategy.ts).
// Started by src/executor/sandbox-process.ts with `--enable-experimental-regexp-engine-on-excessive-backtracks`
// on the command line (Node refuses that flag in worker execArgv), so catastrophic regular
// expressions in guest code fall back to a linear engine.

import type { MessagePort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { MemoryWatch } from './memory-watch.js';
import { ThreadPool } from './thread-pool.js';
import { stoppedCall } from './call-errors.js';
import { ThreadSupervisor } from './thread-supervisor.js';
import type { ServedCall } from './thread-supervisor.js';
import { ExitWatch, SELF_KILL_MS } from './exit-watch.js';
import { HOST_LINK_ENV, SLOT_THREAD_ID } from './protocol.js';
import type { FromSandbox, HostLinkInfo, SandboxProcessOptions, ToSandbox, ToThread, WorkerMessage } from './protocol.js';
import type { RuntimeStrategy } from './runtime-strategy.js';

const started = performance.now();
const options = JSON.parse(process.argv[2] ?? '{}') as SandboxProcessOptions;
/** How the runtime's threads are interrupted, recycled and replaced (its row names the module). */
const strategy = ((await import(options.strategy)) as { default: RuntimeStrategy }).default;
// The host link's secret (protocol.ts HOST_LINK_ENV), taken out of the environment before any
// worker thread starts with a copy of it.
const linkJson = process.env[HOST_LINK_ENV];
delete process.env[HOST_LINK_ENV];
if (linkJson) options.hostLink = JSON.parse(linkJson) as HostLinkInfo;
/** After 'shutdown', how long the threads may take to end before the process exits anyway, ms. */
const SHUTDOWN_MS = 500;

/** Each worker thread's channel (workers/kit/thread-channel.ts), by threadId. */
const channels = new Map<number, MessagePort>();

const threads = new ThreadPool(options, {
  onError(err: unknown) {
    fatal(`sandbox pool error: ${(err as Error)?.message ?? String(err)}`);
  },
  onChannel(threadId, port) {
    channels.set(threadId, port);
    port.on('message', (m: WorkerMessage) => fromThread(threadId, m));
    port.once('close', () => channels.delete(threadId));
  },
});

/** What a thread tells this side: the rest of a call travels on its link. */
function fromThread(threadId: number, m: WorkerMessage): void {
  if (m.kind === 'busy') return supervisor.wake();
  if (m.kind === 'retire') return supervisor.retire(threadId);
  const call = supervisor.find(m.id);
  // Only about the call its own thread runs now: another thread cannot speak for it.
  if (!call || Atomics.load(call.interrupt, SLOT_THREAD_ID) !== threadId) return;
  if (m.kind === 'host-call') send({ type: 'host-call', id: m.id, key: m.key, callId: m.callId, method: m.method, args: m.args });
  else memory.answer(m.id, call, m.bytes);
}

/** The channel of the thread running `call`. */
function channelOf(call: ServedCall): MessagePort | undefined {
  return channels.get(Atomics.load(call.interrupt, SLOT_THREAD_ID));
}

const running = new Map<number, ServedCall>();
const memory = new MemoryWatch(
  running,
  (id, call, limit) => {
    const port = channelOf(call);
    port?.postMessage({ kind: 'memory-probe', limit, id } satisfies ToThread);
    return port !== undefined;
  },
  (id) => supervisor.abort(id, 'memory'),
);

function send(msg: FromSandbox): void {
  if (process.connected) process.send?.(msg);
}
const exits = new ExitWatch(() => threads.current.pool.threads, send);

function fatal(message: string): never {
  send({ type: 'fatal', message });
  process.exit(1);
}

const supervisor = new ThreadSupervisor({
  threads,
  count: options.threads,
  strategy,
  send,
  memory,
  running,
  pollMs: options.memoryPollMs,
  idleTrimMs: options.idleTrimMs ?? 60_000,
  watchExit: (entry) => exits.watch(entry),
  failureOf: (err, call) => stoppedCall(err, call.reason, { timeoutMs: call.timeoutMs ?? 0, memoryMb: call.memoryMb, heapLimitMb: options.maxMemoryMb }),
  accepting: () => !exits.unstoppable,
  fatal,
});

process.on('message', onMessage);

function onMessage(msg: ToSandbox): void {
  switch (msg.type) {
    case 'abort':
      supervisor.abort(msg.id, msg.reason, msg.timeoutMs);
      break;
    case 'host-reply': {
      const call = supervisor.find(msg.id);
      if (!call) break;
      channelOf(call)?.postMessage({ ...msg.reply, id: msg.id } satisfies ToThread);
      Atomics.store(call.wake, 0, 1);
      Atomics.notify(call.wake, 0);
      break;
    }
    case 'recycle': {
      // The coordinator hands this (idle) process to another agent once this answers.
      strategy.recycle(threads).then(
        (ms) => {
          supervisor.fill();
          send({ type: 'recycled', ms });
        },
        (err: unknown) => fatal(`a pristine sandbox thread failed to start: ${(err as Error)?.message ?? String(err)}`),
      );
      break;
    }
    case 'shutdown':
      // Every thread is ended now (its call answered as cancelled), so the pool closes at once.
      supervisor.close();
      setTimeout(() => process.exit(0), SHUTDOWN_MS).unref();
      void threads.close().finally(() => process.exit(0));
      break;
  }
}

// The coordinator is gone: nobody can use this process any more. process.exit() waits for every
// worker thread, which a thread stuck in native code never lets happen: kill as a backstop.
process.on('disconnect', () => {
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), SELF_KILL_MS).unref();
  process.exit(0);
});

// Warm every thread (load the runtime, open its link) before saying ready, so no call pays a cold start.
threads.start().then(
  () => {
    supervisor.fill();
    send({ type: 'ready', threads: options.threads, startupMs: Math.round(performance.now() - started) });
  },
  (err: unknown) => fatal(`sandbox workers failed to start: ${(err as Error)?.message ?? String(err)}`),
);
