// Messages between the coordinator, a sandbox process (pool host) and its worker threads,
// defined once for all sides. Everything here crosses a structured-clone boundary: plain data only.


export type SandboxLanguage = 'javascript' | 'typescript' | 'python';

/** JSON data as it travels (after the worker turned guest values into plain data). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A call as the coordinator hands it to a sandbox process. */
export interface RunRequest {
  code: string;
  language: SandboxLanguage;
  /** JSON text of context_vars, parsed afresh inside the worker. */
  contextJson?: string;
  /**
   * Long string values of context_vars, as [name, value], held out of contextJson (context-vars.ts):
   * megabytes of JSON text given to the code to parse itself then reach it without being
   * JSON-escaped and decoded once more on the way.
   */
  contextStrings?: [string, string][];
  timeoutMs: number;
  memoryMb: number;
  /** The agent's workspace name as the guest sees it (`workspace` global). */
  workspaceName: string;
  /**
   * Who runs this call (the agent's name). The pool's dispatch is keyed by it: a realm or
   * interpreter that ran one agent's code never runs another agent's unless it is pristine.
   */
  agent: string;
  /**
   * Upstream tool names the guest may call, as `server.tool` (already filtered by permissions).
   * Python only: JavaScript asks for them (TOOL_NAMES_METHOD) the first time code enumerates
   * `tools`, so an ordinary call carries and builds nothing for hundreds of upstream tools.
   */
  toolNames?: string[];
  /** Whether `fetch` is endowed (the agent has some net permission). */
  fetchAllowed: boolean;
  /** Present when the agent may read its workspace: read_file is served in the worker (fast-read.ts). */
  readGrant?: ReadGrant;
  /** Stream output lines back as they are written. */
  streamOutput: boolean;
  /**
   * A secret of this call, made by the coordinator for each dispatch and known only to the thread
   * that runs it: every host call carries it, and the coordinator serves a call's host calls only
   * with its key. Another thread of the same process (another agent's, were its realm ever
   * escaped) cannot act as this call even knowing its id.
   */
  callKey?: string;
  /** Largest host-call argument, characters; larger ones are refused in the worker. */
  maxArgChars: number;
}

/** The host call a JavaScript guest makes, once, when it first enumerates `tools`; answered by the executor. */
export const TOOL_NAMES_METHOD = 'tool_names';

/**
 * The coordinator's grant to read files in the worker itself. Whether a call may read is decided
 * by the host (src/executor/host-api.ts); the worker only confines reads to `root` and sends
 * anything it does not serve, refusals included, to the host.
 */
export interface ReadGrant {
  /** The real path of the agent's workspace namespace (no symlink in it). */
  root: string;
  /** Largest file served, bytes (the workspace's file limit). */
  maxBytes: number;
  /** Top-level names that are host-generated views (the catalog's `servers/`): always the host's. */
  hostOnly: string[];
}

/** What the worker thread receives from its pool host (after preprocessing). */
export interface WorkerTask extends Omit<RunRequest, 'code'> {
  /** Evaluable JavaScript (for JS/TS: wrapped, neutralized); Python: the source as is. */
  source: string;
  /** The call's id: every message about it on the thread's channel carries it (thread-channel.ts). */
  id: number;
  /** Int32Array[1] over a SharedArrayBuffer: set to 1 and notified when a host reply is posted. */
  wake: Int32Array;
  /**
   * The thread's slots (Int32Array(THREAD_SLOTS) over a SharedArrayBuffer, SLOT_* below): [0] the
   * main thread stores 2 (SIGINT) to stop a runaway call without ending the thread (Pyodide's
   * interrupt buffer); [1] the thread's id; [2] characters the worker read itself (fast-read.ts),
   * still counted when the thread is ended; then the call's id, memory limit, clean-up and stop reason.
   */
  interrupt: Int32Array;
}

export type ErrorInfo = {
  type: string;
  message: string;
  traceback?: string;
  line?: number;
  column?: number;
};

export type Outcome =
  | { ok: true; value: Json; output: string[]; outputDropped?: number; heapBytes?: number; readChars?: number }
  | { ok: false; error: ErrorInfo; output: string[]; outputDropped?: number; readChars?: number };

/** Worker → its process's main thread, over the thread's channel (thread-channel.ts). */
export type WorkerMessage =
  /** A synchronous host call: the thread is blocked in Atomics.wait and cannot read its link. */
  | { kind: 'host-call'; id: number; key: string; callId: number; method: string; args: unknown[] }
  /** Answer to a memory probe: what the running call retains, bytes. */
  | { kind: 'memory'; id: number; bytes: number }
  /** This process's running-call count went from 0 to 1 (the memory watch wakes). */
  | { kind: 'busy' }
  /** This thread must not take another call (its interpreter is damaged, or its link closed): end and replace it. */
  | { kind: 'retire' };

/** Thread → coordinator over its link: an awaited host call or a call's output (WorkerMessage's shapes, with the key). */
export type LinkHostCall = Extract<WorkerMessage, { kind: 'host-call' }>;

/** Pool host → worker on the thread's channel: a reply or probe, with the id of its call. */
export type ToThread = HostReply & { id: number };

/** Pool host → worker: the answer to a host call, or a memory probe (sent as a ToThread). */
export type HostReply =
  | { kind: 'host-reply'; callId: number; ok: true; value: unknown }
  | { kind: 'host-reply'; callId: number; ok: false; error: { name: string; message: string; code?: string } }
  /** The process's resident memory grew past the call's limit: how much does the call itself hold? */
  | { kind: 'memory-probe'; limit: number };

/** Coordinator → sandbox process (IPC). */
export type ToSandbox =
  /** `timeoutMs`: the call's limit, for the message of a timeout (this side never sees the call itself). */
  | { type: 'abort'; id: number; reason: AbortReason; timeoutMs?: number }
  | { type: 'host-reply'; id: number; reply: HostReply }
  /** Replace the (idle) interpreter with a pristine one before another agent may use this process. */
  | { type: 'recycle' }
  | { type: 'shutdown' };

/** Sandbox process → coordinator (IPC). */
export type FromSandbox =
  | { type: 'ready'; threads: number; startupMs: number }
  /** The answer for a call whose thread was ended (abort, memory, crash, shutdown): the thread can no longer give it. */
  | { type: 'done'; id: number; outcome: Outcome; workerReplaced: boolean }
  /** A synchronous host call, relayed (the only thing about a call this process relays). */
  | { type: 'host-call'; id: number; key: string; callId: number; method: string; args: unknown[] }
  /** Answer to 'recycle': the interpreter is pristine again (`ms`: how long that took). */
  | { type: 'recycled'; ms: number }
  | { type: 'fatal'; message: string }
  /** A terminated worker thread did not exit (stuck in native code): kill this process. */
  | { type: 'unstoppable'; message: string };

export type AbortReason = 'timeout' | 'cancelled' | 'memory' | 'shutdown';

/**
 * The one channel of a call: the coordinator writes it to a free worker thread's host link and
 * reads its output and answer there; the sandbox process's main thread never sees it. Frames are
 * newline-delimited JSON. Coordinator → thread: LinkRun; thread → coordinator: LinkServing,
 * LinkOutput, LinkDone and awaited host calls (LinkHostCall). Every frame about a call carries its
 * id and its key (RunRequest.callKey), and the coordinator takes a call's frames only from the link
 * it sent the call on. A thread runs one call at a time and is sent one only when it said it serves.
 */
export interface LinkRun {
  kind: 'run';
  id: number;
  request: RunRequest;
  /**
   * The request's contextStrings, as [name, UTF-8 bytes]: their text follows the frame's newline
   * as raw bytes, in this order (line-reader.ts expect), neither JSON-escaped nor parsed.
   */
  raw?: [string, number][];
}
/** The thread takes a call now (it started, or finished what its last call left to do). */
export interface LinkServing {
  kind: 'serving';
  /** A bound interpreter's memory already grew this far: a call with a smaller memory_mb needs a pristine one, MB. */
  minMemoryMb?: number;
}
export interface LinkDone {
  kind: 'done';
  id: number;
  key: string;
  outcome: Outcome;
  /** The thread still works for this call (Python's clean-up): it is not free until it says 'serving'. */
  busy?: true;
}
export interface LinkOutput {
  kind: 'output';
  id: number;
  key: string;
  lines: string[];
}
export type ToLinkThread = LinkRun;

/** Characters of result a JavaScript worker serializes at most (the coordinator spills what passes its budget). */
export const MAX_RESULT_CHARS = 16 * 1024 * 1024;
/** Characters of one call's answer at most: its result and its kept output (call-scope.ts MAX_OUTPUT_CHARS). */
export const MAX_ANSWER_CHARS = MAX_RESULT_CHARS + 2_000_000 + 64 * 1024;

/**
 * A JavaScript thread's slots in its serve task's shared buffer (Int32Array), read by the pool
 * host's main thread without a message: which call runs there (for abort and the memory watch)
 * and with what limit. [1] and [2] are WorkerTask.interrupt's slots (threadId, characters read).
 */
export const SLOT_INTERRUPT = 0;
export const SLOT_THREAD_ID = 1;
export const SLOT_CALL_ID = 3;
export const SLOT_MEMORY_MB = 4;
/**
 * Set by the thread while it works for a call that already answered (Python's clean-up): how long
 * that may take, ms. The main thread ends the thread past it (the interpreter is replaced instead).
 */
export const SLOT_CLEAN_MS = 5;
/** Why the main thread stopped the running call (STOP_REASONS index + 1), set before it interrupts it. */
export const SLOT_STOP_REASON = 6;
export const THREAD_SLOTS = 7;
/** AbortReason by SLOT_STOP_REASON - 1. */
export const STOP_REASONS: readonly AbortReason[] = ['timeout', 'cancelled', 'memory', 'shutdown'];

/** The serve task every worker thread runs for its whole life (settles only when it is terminated). */
export interface ServeTask {
  serve: true;
  /** Int32Array(THREAD_SLOTS) over a SharedArrayBuffer: this thread's slots. */
  slots: Int32Array;
  /**
   * Int32Array[2]: [0] running calls in this process; [1] 1 while the main thread's memory watch
   * polls. A thread that starts a call while [1] is 0 tells the main thread ('busy'), so a busy
   * process costs no message per call.
   */
  busy: Int32Array;
  /** Int32Array[1]: the sync host-call wake of this thread (WorkerTask.wake). */
  wake: Int32Array;
  /** Idle this long, ms, the thread drops what it cached for calls. */
  idleTrimMs: number;
}

/**
 * What a sandbox process must know of its runtime: the `process` part of the runtime's row
 * (src/executor/runtimes.ts). The pool host and its thread pool consult these, never a language name.
 */
export interface RuntimeProcess {
  /** The runtime's short name (js, python): the pool's name in logs, health and metrics. */
  kind: string;
  /** The worker thread script, as a file URL (the row's path, resolved by src/executor/runtimes.ts). */
  workerFile: string;
  /** Native stack of each worker thread, MiB (CPython's recursion needs a deep one). */
  stackSizeMb: number;
  /**
   * 'hardened': every call gets a fresh realm over hardened endowments (pristine by construction);
   * a terminated thread is replaced and an abort terminates it. 'bound': one interpreter per
   * process serves one agent; it is replaced (from a warm standby) before another agent's call,
   * and whenever it was damaged; an abort first sets the interrupt flag the interpreter checks.
   */
  dispatch: 'bound' | 'hardened';
  /**
   * The runtime's supervision strategy, as a file URL (the row's path, resolved like workerFile):
   * its default export (workers/kit/runtime-strategy.ts) says how a thread's call is interrupted,
   * what a recycle does, and how an ended thread is replaced.
   */
  strategy: string;
  /** How long the process may take to warm its threads before it counts as failed, ms (the coordinator's clock). */
  startupTimeoutMs: number;
  /**
   * How messages cross between the coordinator and the process (node's fork `serialization`).
   * 'json' (the default) costs least per small message. 'advanced' (V8's serializer) moves a long
   * string as its bytes: a call whose context_vars hold megabytes of JSON text crosses about 4x
   * faster than escaped once more inside a JSON line (the runtime's calls all take this channel).
   */
  serialization?: 'json' | 'advanced';
}

/** Code ready for a worker, or the error that stops it before it runs (JavaScript's preprocessing). */
export type Preprocessed = { ok: true; source: string } | { ok: false; error: ErrorInfo };


/** Options a sandbox process is started with (argv[2] as JSON). */
export interface SandboxProcessOptions extends RuntimeProcess {
  threads: number;
  /** V8 old-generation limit of each worker thread, MiB (the configured maximum memory_mb). */
  maxMemoryMb: number;
  /** How often the process checks its resident memory against running calls' limits, ms. */
  memoryPollMs: number;
  /**
   * Each worker thread's one channel to the coordinator (workers/kit/host-link.ts): a thread without
   * it fails to start. Never in argv: it travels in the environment variable HOST_LINK_ENV (see there).
   */
  hostLink?: HostLinkInfo;
  /** JavaScript: idle this long, ms, threads drop what they cached for calls (default a minute). */
  idleTrimMs?: number;
  /** Python: the folder of the interpreters' memory snapshot (workers/python/snapshot.ts); cold starts without it. */
  pythonSnapshotDir?: string;
  /**
   * Python: when a warm standby interpreter is kept: 'always' (from start), 'on-swap' (default:
   * from the first swap to another agent on, when swaps are likely) or 'never' (one-shot exec).
   */
  standby?: 'always' | 'on-swap' | 'never';
}

/**
 * The environment variable that carries a sandbox process's HostLinkInfo, as JSON. Not argv: any
 * local user can read a process's command line (/proc/PID/cmdline, ps), only its own user its
 * environment; the pool host removes it from its environment before any thread starts.
 */
export const HOST_LINK_ENV = 'CEM_HOST_LINK';

/** The line the coordinator sends a host link whose hello named a registered process. */
export const HOST_LINK_WELCOME = '{"welcome":true}';

/** The coordinator's host-call socket, and the secret that names this process on it. */
export interface HostLinkInfo {
  path: string;
  secret: string;
}

/** Prefix put before the user's first line: kept on that line so line numbers match. */
export const WRAP_PREFIX = '(async function () {';

/** The file name guest frames carry, so tracebacks show user lines and never host paths. */
export const USER_CODE_URL = 'user-code.js';
