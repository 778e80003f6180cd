// How a sandbox process is started: the worker script in dist/, and the launcher (node's fork in
// production; tests pass doubles whose fork fails or that stand in for the pool host).

import { EventEmitter } from 'node:events';
import { fork } from 'node:child_process';
import type { ForkOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HOST_LINK_ENV } from '../../workers/kit/protocol.js';
import type { HostLinkInfo, Outcome, SandboxProcessOptions, ToSandbox } from '../../workers/kit/protocol.js';

/** What the pool needs of a child process; node's ChildProcess fits, and tests pass doubles. */
export interface SandboxChild extends EventEmitter {
  readonly pid?: number | undefined;
  readonly connected: boolean;
  send(message: ToSandbox, callback: (error: Error | null) => void): boolean;
  kill(signal?: NodeJS.Signals): boolean;
}

/** Starts a sandbox process: `fork` in production, a double in tests (a fork that fails, ...). */
export type LaunchSandbox = (script: string, args: readonly string[], options: ForkOptions) => SandboxChild;

export const launchWithFork: LaunchSandbox = (script, args, options) => fork(script, [...args], options);

/** The compiled worker entry; tests run the TypeScript sources but the sandbox always runs dist/. */
export function workerScript(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const url = fromSource ? new URL(`../../dist/workers/${name}.js`, import.meta.url) : new URL(`../../workers/${name}.js`, import.meta.url);
  return fileURLToPath(url);
}

/** Starts the pool host with `options`; a fork that throws becomes a child that emits 'error'. */
export function launchSandbox(launch: LaunchSandbox, options: SandboxProcessOptions, link: HostLinkInfo | undefined): SandboxChild {
  const forkOptions: ForkOptions = {
    execArgv: ['--enable-experimental-regexp-engine-on-excessive-backtracks'],
    // Every message is plain JSON data (results and host values are made JSON-safe in the worker):
    // JSON framing costs about half the CPU of the structured-clone serializer per message. A
    // runtime whose calls carry long text (Python: every call takes this channel) asks for V8's.
    serialization: options.serialization ?? 'json',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    // A process group of its own: a terminal's Ctrl-C reaches the daemon only, which stops its
    // sandboxes in order (and a sandbox whose daemon is gone exits on 'disconnect').
    detached: true,
    // The link's secret goes in the environment, not in argv, where every local user sees it.
    env: { NODE_ENV: process.env.NODE_ENV ?? 'production', ...(link ? { [HOST_LINK_ENV]: JSON.stringify(link) } : {}) },
  };
  try {
    return launch(workerScript('kit/pool-host'), [JSON.stringify(options)], forkOptions);
  } catch (err) {
    // fork throws for some errors (ENOMEM) instead of emitting 'error': the same failure.
    const child = new EventEmitter() as unknown as SandboxChild;
    Object.assign(child, { pid: undefined, connected: false, send: () => false, kill: () => false });
    process.nextTick(() => child.emit('error', err));
    return child;
  }
}

/**
 * Writes `msg` to the process. A value the channel cannot carry (V8's serializer refuses
 * functions, JSON refuses BigInt and cycles) throws before anything is written: then it goes as
 * JSON data, and a host reply that is not JSON data fails its host call instead of the daemon.
 */
export function sendToSandbox(child: SandboxChild, msg: ToSandbox, failed: (err: Error) => void): void {
  const sent = (err: Error | null): void => {
    if (err) failed(err);
  };
  try {
    child.send(msg, sent);
    return;
  } catch {
    // below, as JSON data
  }
  try {
    child.send(JSON.parse(JSON.stringify(msg)) as ToSandbox, sent);
  } catch (err) {
    if (msg.type !== 'host-reply' || msg.reply.kind !== 'host-reply') return failed(err as Error);
    const error = { name: 'TypeError', message: `the host's answer is not JSON data (${(err as Error).message})` };
    child.send({ ...msg, reply: { kind: 'host-reply', callId: msg.reply.callId, ok: false, error } }, sent);
  }
}

/** What a call in flight gets when its process dies: `started` calls fail, the others go elsewhere. */
export function diedWith(started: boolean, code: number | null, signal: NodeJS.Signals | null): Finished {
  if (!started) {
    // Still waiting: the death was another call's; this one goes elsewhere.
    return { outcome: { ok: false, output: [], error: { type: 'SandboxCrashError', message: 'the sandbox process died before the call started' } }, workerReplaced: false, requeue: true };
  }
  // V8's fatal out-of-memory aborts the process (SIGABRT, or exit 134): the call it was running
  // allocated past what any limit could stop in time.
  const oom = signal === 'SIGABRT' || signal === 'SIGTRAP' || signal === 'SIGILL' || code === 134;
  const error = oom
    ? { type: 'MemoryLimitError', message: 'the call exhausted memory and V8 stopped its sandbox process; the process was replaced and other calls were not affected' }
    : { type: 'SandboxCrashError', message: `the sandbox process died (code ${code}, signal ${signal}); it was replaced` };
  return { outcome: { ok: false, output: [], error }, workerReplaced: true, processDied: true };
}

/** How a call ended, as its process reports it. */
export interface Finished {
  outcome: Outcome;
  /** The worker thread (or the whole process) was replaced after this call. */
  workerReplaced: boolean;
  processDied?: boolean;
  /** The process died before this call started: it never ran, and may be sent elsewhere. */
  requeue?: boolean;
}
