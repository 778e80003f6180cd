// Drives one real Python sandbox process (the compiled dist/workers/kit/pool-host.js) over its IPC
// protocol, the way the coordinator's pool does: calls named by agent, 'recycle' before another
// agent, host calls answered from an in-memory workspace. Tests of what an interpreter keeps
// between calls use it to see exactly one interpreter, with no pool dispatch in between.

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { pythonSnapshotDir } from '../../src/executor/python-pool.js';
import { PYTHON_RUNTIME, runtimeProcess } from '../../src/executor/runtimes.js';
import { workerScript } from '../../src/executor/sandbox-process.js';
import { unbatch } from '../../workers/kit/ipc-batch.js';
import type { Batch } from '../../workers/kit/ipc-batch.js';
import type { FromSandbox, Outcome, RunRequest, SandboxProcessOptions, ToSandbox } from '../../workers/kit/protocol.js';

export interface Finished {
  outcome: Outcome;
  workerReplaced: boolean;
}

export interface RunOptions {
  agent?: string;
  memoryMb?: number;
  timeoutMs?: number;
}

export class PythonProcess {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (f: Finished) => void>();
  /** Which agent each running call belongs to, so host calls reach that agent's files. */
  readonly #agents = new Map<number, string>();
  readonly #recycled: ((ms: number) => void)[] = [];
  readonly #workerReady: (() => void)[] = [];
  /** Each agent's files, as the host's workspace would hold them. */
  readonly files = new Map<string, Map<string, string>>();
  readonly ready: Promise<number>;
  #nextId = 1;
  #exited = false;

  constructor() {
    // Interpreters from the memory snapshot, as the daemon starts them, with a standby kept warm.
    const options: SandboxProcessOptions = { ...runtimeProcess(PYTHON_RUNTIME), threads: 1, maxMemoryMb: 2048, memoryPollMs: 100, pythonSnapshotDir: pythonSnapshotDir({}), standby: 'always' };
    this.#child = fork(workerScript('kit/pool-host'), [JSON.stringify(options)], {
      execArgv: ['--enable-experimental-regexp-engine-on-excessive-backtracks'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.#child.on('exit', () => {
      this.#exited = true;
    });
    this.ready = new Promise((resolve, reject) => {
      // The process batches what it sends in one turn (workers/kit/ipc-batch.ts).
      this.#child.on('message', (batch: FromSandbox | Batch<FromSandbox>) =>
        unbatch(batch, (msg) => {
          if (msg.type === 'ready') resolve(msg.startupMs);
          else if (msg.type === 'fatal') reject(new Error(msg.message));
          else this.#onMessage(msg);
        }),
      );
      this.#child.once('exit', (code) => reject(new Error(`the sandbox process exited (code ${code})`)));
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get alive(): boolean {
    return !this.#exited;
  }

  run(code: string, options: RunOptions = {}): Promise<Finished> {
    const id = this.#nextId++;
    const agent = options.agent ?? 'alice';
    const request: RunRequest = {
      code,
      language: 'python',
      timeoutMs: options.timeoutMs ?? 30_000,
      memoryMb: options.memoryMb ?? 500,
      workspaceName: agent,
      agent,
      toolNames: [],
      fetchAllowed: false,
      streamOutput: false,
      maxArgChars: 1 << 20,
    };
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#agents.set(id, agent);
      this.#send({ type: 'run', id, request });
    });
  }

  /** Asks for a pristine interpreter; resolves with the time the process says it took, ms. */
  recycle(): Promise<number> {
    return new Promise((resolve) => {
      this.#recycled.push(resolve);
      this.#send({ type: 'recycle' });
    });
  }

  /** Resolves at the next 'worker-ready' (a crashed call's replacement is in place). */
  workerReady(): Promise<void> {
    return new Promise((resolve) => this.#workerReady.push(resolve));
  }

  close(): void {
    if (!this.#exited) this.#child.kill('SIGKILL');
  }

  #send(msg: ToSandbox): void {
    this.#child.send(msg);
  }

  #onMessage(msg: FromSandbox): void {
    if (msg.type === 'done') {
      this.#agents.delete(msg.id);
      const resolve = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      resolve?.({ outcome: msg.outcome, workerReplaced: msg.workerReplaced });
    } else if (msg.type === 'recycled') {
      this.#recycled.shift()?.(msg.ms);
    } else if (msg.type === 'worker-ready') {
      this.#workerReady.shift()?.();
    } else if (msg.type === 'host-call') {
      this.#send({ type: 'host-reply', id: msg.id, reply: { kind: 'host-reply', callId: msg.callId, ...this.#host(this.#agents.get(msg.id) ?? '', msg.method, msg.args) } });
    }
  }

  /** read_file/write_file/list_files of the calling agent's own files; every other method refuses. */
  #host(agent: string, method: string, args: unknown[]): { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } } {
    let files = this.files.get(agent);
    if (!files) this.files.set(agent, (files = new Map()));
    const [name, content] = args;
    if (method === 'write_file' && typeof name === 'string' && typeof content === 'string') {
      files.set(name, content);
      return { ok: true, value: { success: true } };
    }
    if (method === 'read_file' && typeof name === 'string') {
      const text = files.get(name);
      return text === undefined ? { ok: false, error: { name: 'FileNotFoundError', message: `no file ${name}` } } : { ok: true, value: text };
    }
    if (method === 'list_files') return { ok: true, value: [...files.keys()] };
    return { ok: false, error: { name: 'PermissionError', message: `${method} is not available in this test` } };
  }
}

/** The call's value, or a thrown error naming what the call reported. */
export function valueOf(f: Finished): unknown {
  if (!f.outcome.ok) throw new Error(`the call failed: ${f.outcome.error.type}: ${f.outcome.error.message}`);
  return f.outcome.value;
}

/** The error of a call that must have been refused (throws when it succeeded). */
export function errorOf(f: Finished): { type: string; message: string } {
  if (f.outcome.ok) throw new Error(`the call succeeded with ${JSON.stringify(f.outcome.value)}; expected a refusal`);
  return f.outcome.error;
}
