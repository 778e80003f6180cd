// One pino logger on stderr: stdout carries the MCP protocol in stdio mode, so nothing else may
// write there. Guest values are never logged (a guest object could carry inspect hooks).
import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { pid: process.pid, ...bindings } }, pino.destination({ fd: 2, sync: false }));
}

/** A logger that drops everything, for tests and embedded use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
