// Drives one real Python sandbox process (the compiled dist/workers/kit/pool-host.js) the way the
// coordinator's pool does, through the coordinator's own handle on it (SandboxProcess, over a real
// host link): calls named by agent, 'recycle' before another agent (and before a call whose
// memory_mb the interpreter already grew past), host calls answered from an in-memory workspace.
// Tests of what an interpreter keeps between calls use it to see exactly one interpreter, with no
// pool dispatch in between.

import { randomUUID } from 'node:crypto';
import { HostLinkServer } from '../../src/executor/host-link-server.js';
import { pythonSnapshotDir } from '../../src/executor/python-pool.js';
import { PYTHON_RUNTIME, runtimeProcess } from '../../src/executor/runtimes.js';
import { SandboxProcess } from '../../src/executor/sandbox-process.js';
import type { HostReply, Outcome, RunRequest, SandboxProcessOptions } from '../../workers/kit/protocol.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';

export interface Finished {
  outcome: Outcome;
  workerReplaced: boolean;
}

export interface RunOptions {
  agent?: string;
  memoryMb?: number;
  timeoutMs?: number;
  /** Sent as is, to whatever thread is free: no recycle first even for another agent (an attack on the worker's own check). */
  asIs?: boolean;
}

export class PythonProcess {
  #proc: SandboxProcess | undefined;
  #link: HostLinkServer | undefined;
  /** Which agent each running call belongs to, so host calls reach that agent's files. */
  readonly #agents = new Map<number, string>();
  /** The agent the interpreter serves: another agent's call gets a pristine one first, as the pool does. */
  #boundTo: string | undefined;
  readonly #free: (() => void)[] = [];
  #recycling: Promise<number> | undefined;
  /** Each agent's files, as the host's workspace would hold them. */
  readonly files = new Map<string, Map<string, string>>();
  readonly ready: Promise<number>;
  #nextId = 1;
  #exited = false;

  constructor(options: Partial<SandboxProcessOptions> = {}) {
    this.ready = this.#start(options);
  }

  async #start(extra: Partial<SandboxProcessOptions>): Promise<number> {
    this.#link = await HostLinkServer.open(64 * 1024 * 1024, silentLogger());
    // Interpreters from the memory snapshot, as the daemon starts them, with a standby kept warm.
    const options: SandboxProcessOptions = { ...runtimeProcess(PYTHON_RUNTIME), threads: 1, maxMemoryMb: 2048, memoryPollMs: 100, pythonSnapshotDir: pythonSnapshotDir({}), standby: 'always', ...extra };
    const proc = new SandboxProcess(
      options,
      {
        onHostCall: (id, callId, method, args, reply) => {
          const answer: HostReply = { kind: 'host-reply', callId, ...this.#host(this.#agents.get(id) ?? '', method, args) };
          if (reply) reply(answer);
          else proc.reply(id, answer);
        },
        onOutput: () => undefined,
        onExit: (_p, code, signal) => {
          if (process.env.DRIVER_LOG) process.stderr.write(`sandbox process exited: ${code} ${signal}\n`);
          this.#exited = true;
          for (const wake of this.#free.splice(0)) wake();
        },
        onWorkerReady: () => {
          for (const wake of this.#free.splice(0)) wake();
        },
      },
      process.env.DRIVER_LOG ? createLogger('debug') : silentLogger(),
      this.#link,
    );
    this.#proc = proc;
    await proc.ready;
    return proc.startupMs;
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  get alive(): boolean {
    return !this.#exited;
  }

  async run(code: string, options: RunOptions = {}): Promise<Finished> {
    const proc = this.#proc as SandboxProcess;
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
      callKey: randomUUID(),
    };
    // As the pool: a call goes to a free thread only, and to a pristine interpreter when this one grew past its limit.
    for (;;) {
      await this.#recycling;
      await this.workerReady();
      if (options.asIs || (proc.fits(request.memoryMb) && (this.#boundTo ?? agent) === agent) || this.#exited) break;
      await this.recycle();
    }
    this.#boundTo = agent;
    this.#agents.set(id, agent);
    const finished = await proc.run(id, request);
    this.#agents.delete(id);
    // Another call took the free thread first (two sent at once): this one never started; again.
    if ((finished as { requeue?: boolean }).requeue && !this.#exited) return this.run(code, options);
    return finished;
  }

  /** Asks for a pristine interpreter; resolves with the time the process says it took, ms. */
  recycle(): Promise<number> {
    const proc = this.#proc as SandboxProcess;
    this.#recycling ??= (async () => {
      while (proc.busy > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const ok = await proc.recycle(30_000);
      if (!ok) throw new Error('the sandbox process did not answer a recycle');
      this.#boundTo = undefined;
      return proc.lastRecycleMs;
    })().finally(() => {
      this.#recycling = undefined;
    });
    return this.#recycling;
  }

  /** Resolves when a thread is free again (a crashed call's replacement is in place). */
  async workerReady(): Promise<void> {
    const proc = this.#proc as SandboxProcess;
    while (proc.free === 0 && !this.#exited) await new Promise<void>((resolve) => this.#free.push(resolve));
  }

  close(): void {
    if (!this.#exited) this.#proc?.kill();
    void this.#link?.close();
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
