// How `serve` writes its logs: JSON lines (pino) for machines, or short human lines when a person
// watches a terminal. 'auto' picks text on a TTY and JSON otherwise, so a service manager or a
// pipe always gets JSON and `npm start` in a terminal gets something a person can read.

import type { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Config } from '../config/config-types.js';
import { createLogger } from '../util/logger.js';
import type { Logger } from '../util/logger.js';

export type LogFormat = 'json' | 'text';

/** The format a command logs in, from `logFormat` and whether stderr is a terminal. */
export function resolveLogFormat(config: Pick<Config, 'logFormat'>, stderr: Writable): LogFormat {
  const wanted = config.logFormat ?? 'auto';
  if (wanted !== 'auto') return wanted;
  return (stderr as { isTTY?: boolean }).isTTY === true ? 'text' : 'json';
}

export function createCliLogger(config: Pick<Config, 'logLevel' | 'logFormat'>, stderr: Writable, bindings: Record<string, unknown>): { logger: Logger; format: LogFormat } {
  const format = resolveLogFormat(config, stderr);
  if (format === 'json') return { logger: createLogger(config.logLevel, bindings), format };
  return { logger: pino({ level: config.logLevel, base: null }, { write: (line: string) => void stderr.write(textLine(line)) }), format };
}

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service']);

/** One pino JSON line as `12:03:04 WARN tool call agent=alice tool=execute_code outcome=timeout`. */
export function textLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry['time'] === 'number' ? new Date(entry['time']).toISOString().slice(11, 19) : '';
  const level = LEVEL_NAMES[Number(entry['level'])] ?? String(entry['level']);
  const fields = Object.entries(entry)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return `${time} ${level.padEnd(5)} ${String(entry['msg'] ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}\n`;
}
