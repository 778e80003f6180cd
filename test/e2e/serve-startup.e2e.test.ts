// `serve` start-up: the port is bound before the sandbox pools start (a port in use is the first
// and only thing said), and Ctrl-C while starting exits 0 without ERROR lines or a stack.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, REPO, scratch } from '../fixtures/mcp/cli.js';
import type { LogLine, Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch | undefined;

afterEach(() => {
  home?.remove();
  home = undefined;
});

/** Runs `serve` in a process group of its own (as a terminal does); `onLine` sees each log line. */
function serve(env: Record<string, string>, args: string[], onLine: (line: LogLine, pid: number) => void = () => undefined): { pid: number; lines: LogLine[]; raw: string[]; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, 'serve', '--log-format', 'json', ...args], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const lines: LogLine[] = [];
  const raw: string[] = [];
  createInterface({ input: proc.stderr }).on('line', (text) => {
    raw.push(text);
    try {
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      onLine(line, proc.pid!);
    } catch {
      // kept in raw
    }
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { pid: proc.pid!, lines, raw, exited };
}

/** Child process ids of `pid` (Linux). */
function childrenOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

describe('serve start-up', () => {
  it('reports a port already in use before starting any subsystem', async () => {
    home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '2' });
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const run = serve(home.env, ['--port', String(port)]);
      expect(await run.exited).not.toBe(0);
      // The refusal is the first line: no skill store, catalog or sandbox pool started first.
      expect(run.lines[0]?.msg, run.raw.join('\n')).toMatch(new RegExp(`port ${port} on 127.0.0.1 is already in use; stop the other process or pick another with --port`));
      expect(run.lines.filter((l) => l['subsystem'] !== undefined)).toEqual([]);
    } finally {
      holder.close();
    }
  }, 60_000);

  it('Ctrl-C while the pools start exits 0 with no ERROR line and no stack', async () => {
    home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '2', CODE_EXEC_PYTHON_PROCESSES: '1' });
    let sent = false;
    // The skill store starts just before the pools; Ctrl-C lands once the first sandbox process
    // exists, while the pools start. A terminal sends SIGINT to the whole foreground process
    // group, which the sandbox processes were in before this fix.
    const run = serve(home.env, ['--port', '0'], (line, pid) => {
      if (line.msg !== 'skill store started') return;
      const poll = setInterval(() => {
        if (sent || run.lines.some((l) => l.msg === 'listening')) return clearInterval(poll);
        if (childrenOf(pid).length === 0) return;
        sent = true;
        clearInterval(poll);
        process.kill(-pid, 'SIGINT');
      }, 10);
    });
    expect(await run.exited).toBe(0);
    expect(sent, 'the sandbox processes started and the daemon listened before Ctrl-C could be sent').toBe(true);
    expect(run.lines.filter((l) => l.level >= 50).map((l) => JSON.stringify(l))).toEqual([]);
    expect(run.raw.filter((l) => /^\s+at /.test(l))).toEqual([]);
    expect(run.lines.at(-1)?.msg).toBe('stopped');
  }, 60_000);
});
