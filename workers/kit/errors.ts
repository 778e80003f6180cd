// Turns a guest's thrown value into the error fields of execute_code: type, message, a traceback
// of the guest's own frames only (never host paths), and the line:column in the code as submitted.

import type { ErrorInfo } from './protocol.js';
import { USER_CODE_URL, WRAP_PREFIX } from './protocol.js';
import { formatArgs } from './format.js';
import { describeError } from './serialize.js';

declare global {
  // Installed by SES lockdown in the start compartment: the real stack of a (tamed) error.
  var getStackString: ((err: Error) => string) | undefined;
}

/** RangeErrors that mean "out of memory", not a bad argument. */
const MEMORY_MESSAGES = [/Array buffer allocation failed/i, /Invalid string length/i, /Invalid typed array length/i, /out of memory/i];

const FRAME = /^\s*at (?:(.*?) \()?((?:user-code\.js|skill:[A-Za-z0-9_-]+)):(\d+):(\d+)\)?\s*$/;

/** Error fields of a thrown value; never throws, whatever the guest threw (revoked Proxies too). */
export function errorInfo(err: unknown): ErrorInfo {
  try {
    return inspectThrown(err);
  } catch {
    return { type: 'Error', message: 'Uncaught value that cannot be inspected (a revoked Proxy, or a Proxy whose traps throw)' };
  }
}

function inspectThrown(err: unknown): ErrorInfo {
  if (!(err instanceof Error)) {
    if (err !== null && typeof err === 'object' && !Array.isArray(err)) {
      const name = safeField(err, 'name');
      const message = safeField(err, 'message');
      if (name !== undefined || message !== undefined) return { type: name ?? 'Error', message: message ?? '' };
    }
    return { type: 'Error', message: `Uncaught ${formatArgs([err])}` };
  }
  let type = safeField(err, 'name') ?? 'Error';
  let message = safeField(err, 'message') ?? '';
  if (type === 'RangeError' && MEMORY_MESSAGES.some((re) => re.test(message))) {
    type = 'MemoryLimitError';
    message = `${message} (the call ran out of memory)`;
  }
  if (type === 'ReferenceError' && / is not defined$/.test(message)) {
    message += ' (code runs in strict mode: declare variables with let or const; set the global `result` to return a value without `return`)';
  }
  const frames: string[] = [];
  let line: number | undefined;
  let column: number | undefined;
  let stack = '';
  try {
    stack = globalThis.getStackString?.(err) ?? '';
  } catch {
    stack = '';
  }
  for (const raw of stack.split('\n')) {
    const m = FRAME.exec(raw);
    if (!m) continue;
    const [, fn, file = USER_CODE_URL, l = '0', c = '0'] = m;
    const ln = Number(l);
    const col = ln === 1 ? Math.max(1, Number(c) - WRAP_PREFIX.length) : Number(c);
    if (line === undefined && file === USER_CODE_URL) {
      line = ln;
      column = col;
    }
    const name = fn && fn !== 'eval' && !fn.startsWith('eval ') ? fn.replace(/^async /, '') : '<main>';
    frames.push(`    at ${name} (${file}:${ln}:${col})`);
  }
  const info: ErrorInfo = { type, message, traceback: `${type}: ${message}${frames.length ? `\n${frames.join('\n')}` : ''}` };
  if (line !== undefined) {
    info.line = line;
    info.column = column;
  }
  return info;
}

function safeField(obj: object, key: 'name' | 'message'): string | undefined {
  try {
    const v = (obj as Record<string, unknown>)[key];
    return typeof v === 'string' ? v : undefined;
  } catch (err) {
    return `[${key} threw ${describeError(err)}]`;
  }
}
