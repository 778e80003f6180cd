// Each command stops once its last answer is out: exec as soon as its result is written, stdio as
// soon as it has answered what it read before its input closed, serve once SIGTERM has drained it.
// They used to wait 2 s more for a JavaScript sandbox process that ignored its shutdown (killed by
// the backstop), and exec loaded the tokenizer (about 0.5 s of CPU) for one count. The bounds are
// generous (a loaded 2-core machine): they prove the stall is gone, not a speed.

import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

/** Past the answer, what a process may take to exit here, ms: the old stall alone was 2,000. */
const EXIT_BOUND_MS = 1_500;

interface Timed {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From the moment `answered(stdout)` first held to the process's exit, ms. */
  exitAfterAnswerMs: number;
}

/**
 * Runs the CLI with `input` on stdin; `answered` says when stdout holds the last answer. Stdin
 * closes at once, or with `keepInputOpen` once the answer is out.
 */
function timedRun(args: string[], env: Record<string, string>, input: string, answered: (stdout: string) => boolean, keepInputOpen = false): Promise<Timed> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN, ...args], { cwd: REPO, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let answeredAt: number | undefined;
    proc.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      if (answeredAt === undefined && answered(stdout)) {
        answeredAt = performance.now();
        if (keepInputOpen) proc.stdin.end();
      }
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.once('exit', (code) => resolve({ code, stdout, stderr, exitAfterAnswerMs: performance.now() - (answeredAt ?? Number.NaN) }));
    if (keepInputOpen) proc.stdin.write(input);
    else proc.stdin.end(input);
  });
}

let home: Scratch;
beforeAll(() => {
  // The optional sentence encoder, where installed, starts loading in a worker with each session;
  // ending that worker at exit is the catalog's cost, not what is measured here.
  home = scratch({ CODE_EXEC_SEMANTIC_SEARCH: 'false' });
});
afterAll(() => home?.remove());

describe('exec', () => {
  it('exits right after writing its result', async () => {
    const r = await timedRun(['exec', '-', '--language', 'js'], home.env, 'return 1 + 1', (out) => out.endsWith('\n}\n'));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: true, result: 2, language: 'javascript' });
    expect(r.exitAfterAnswerMs).toBeLessThan(EXIT_BOUND_MS);
  }, 60_000);

  it('estimates its token figures without loading the tokenizer', async () => {
    // Node's module debug lines name every CommonJS file it loads (the tokenizer is one).
    const r = await timedRun(['exec', '-'], { ...home.env, NODE_DEBUG: 'module' }, 'return "a".repeat(4000)', (out) => out.endsWith('\n}\n'));
    expect(r.code, r.stderr).toBe(0);
    // characters / 4 (the tokenizer counts about half as many for repeated letters)
    expect(JSON.parse(r.stdout)).toMatchObject({ success: true, context_savings: { tokens_out: Math.ceil(JSON.stringify({ result: 'a'.repeat(4000), output: [] }).length / 4), estimated: true } });
    expect(r.stderr.split('\n').filter((l) => /\bload "[^"]*\/gpt-tokenizer\//.test(l))).toEqual([]);
  }, 60_000);

});

describe('stdio', () => {
  it('exits right after its input closes, once it has answered', async () => {
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'execute_code', arguments: { code: 'return 5' } } },
    ];
    // Input closes once the call is answered: what follows is only the stop.
    const r = await timedRun(['stdio'], home.env, lines.map((l) => JSON.stringify(l)).join('\n') + '\n', (out) => out.split('\n').slice(0, -1).some((l) => l.includes('"id":2')), true);
    expect(r.code, r.stderr).toBe(0);
    const answer = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { structuredContent?: unknown } }).find((a) => a.id === 2);
    expect(answer?.result.structuredContent).toMatchObject({ success: true, result: 5 });
    expect(r.exitAfterAnswerMs).toBeLessThan(EXIT_BOUND_MS);
  }, 60_000);
});

describe('serve', () => {
  it('exits right after SIGTERM once nothing is in flight', async () => {
    const daemon = await startDaemon(home.env);
    const client = await daemon.connect();
    expect((await client.callTool({ name: 'execute_code', arguments: { code: 'return 3' } })).structuredContent).toMatchObject({ success: true, result: 3 });
    await client.close();
    const asked = performance.now();
    daemon.proc.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(performance.now() - asked).toBeLessThan(EXIT_BOUND_MS);
  }, 60_000);
});
