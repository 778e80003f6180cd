// The CLI surface of the real binary: --help/--version, exec's output and exit codes, start-up
// refusals with clear messages, and graceful shutdown of serve with a call in flight.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureTokens } from '../../src/util/tokens.js';
import { runCli, scratch, startDaemon } from '../fixtures/mcp/cli.js';
import type { Scratch } from '../fixtures/mcp/cli.js';

let home: Scratch;
beforeAll(() => {
  home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '1' });
});
afterAll(() => home?.remove());

describe('help and version', () => {
  it('prints the version', async () => {
    const { code, stdout } = await runCli(['--version'], home.env);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each(['serve', 'stdio', 'exec'])('%s --help documents its options with defaults', async (command) => {
    const { code, stdout } = await runCli([command, '--help'], home.env);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: code-execution-mcp ${command}`);
    expect(stdout).toMatch(/--max-timeout-seconds S\s+Largest timeout_seconds a caller may ask for, seconds\. Default 300\./);
  });

  it('refuses an unknown command or flag with exit 2', async () => {
    expect((await runCli(['launch'], home.env)).code).toBe(2);
    const flag = await runCli(['serve', '--prot', '1'], home.env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/Unknown option '--prot'/);
  });
});

describe('exec', () => {
  it('prints the result JSON and exits 0 on success (code from stdin)', async () => {
    const { code, stdout } = await runCli(['exec', '-'], home.env, 'console.log("hello"); return { sum: 1 + 2 }');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ success: true, result: { sum: 3 }, output: ['hello'] });
  });

  it('--count-tokens counts context_savings with the tokenizer, not the estimate', async () => {
    const { code, stdout } = await runCli(['exec', '-', '--count-tokens'], home.env, 'return "a".repeat(4000)');
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as { result: string; output: string[]; context_savings: { tokens_out: number } };
    // The estimate alone (characters / 4) says about 1,000 (what exec printed before); counted, about half.
    expect(printed.context_savings.tokens_out).toBe(measureTokens({ result: printed.result, output: printed.output }).tokens);
    expect(printed.context_savings.tokens_out).toBeLessThan(800);
  });

  it('--progress writes each output line to stderr as it is printed; stdout keeps only the JSON', async () => {
    const { code, stdout, stderr } = await runCli(['exec', '--progress', '-'], home.env, 'console.log("step 1"); await sleep(50); console.log("step 2"); return 7');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ success: true, result: 7, output: ['step 1', 'step 2'] });
    expect(stderr).toContain('step 1\nstep 2\n');
  });

  it('exits 1 when the code fails, with the error in the JSON', async () => {
    const { code, stdout } = await runCli(['exec'], home.env, 'throw new RangeError("out of range")');
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ success: false, error_type: 'RangeError', error: 'out of range' });
  });

  it('takes the language from the file extension', async () => {
    const file = path.join(home.dir, 'typed.ts');
    writeFileSync(file, 'const n: number = 21;\nreturn n * 2;\n');
    const { code, stdout } = await runCli(['exec', file], home.env);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ success: true, result: 42 });
  });

  it('reports a timeout as a failed call (exit 1)', async () => {
    const { code, stdout } = await runCli(['exec', '-', '--timeout', '1'], home.env, 'for (;;) {}');
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ error_type: 'TimeoutError' });
  });

  it.each([
    [['exec', '-', '--timeout', '0'], /--timeout must be a number more than 0 and at most 300/],
    [['exec', '-', '--memory', 'lots'], /--memory must be an integer at least 16/],
    [['exec', '-', '--language', 'ruby'], /--language must be javascript \(js\), typescript \(ts\) or python \(py\)/],
    [['exec', 'no-such-file.js'], /cannot read no-such-file\.js: no such file/],
    [['exec', 'a.js', 'b.js'], /exec takes one FILE/],
  ])('%j is bad usage (exit 2)', async (args, message) => {
    const { code, stderr, stdout } = await runCli(args, home.env, 'return 1');
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  it('names the bad configuration key (exit 2)', async () => {
    const config = home.writeConfig({ limits: { maxTimeoutSeconds: 99999 }, sandbox: { procesess: 2 } });
    const { code, stderr } = await runCli(['exec', '-', '--config', config], home.env, 'return 1');
    expect(code).toBe(2);
    expect(stderr).toMatch(/limits\.maxTimeoutSeconds must be an integer between 1 and 3600; got 99999/);
    expect(stderr).toMatch(/sandbox\.procesess is not an option; did you mean sandbox\.processes\?/);
  });
});

describe('stdio end of input', () => {
  it('answers the requests it read before stdin closed, then exits 0', async () => {
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'execute_code', arguments: { code: 'await sleep(300); return 5' } } },
    ];
    const { code, stdout } = await runCli(['stdio'], home.env, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    expect(code).toBe(0);
    const answers = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { structuredContent?: unknown } });
    expect(answers.find((a) => a.id === 2)?.result.structuredContent).toMatchObject({ success: true, result: 5 });
  }, 60_000);
});

describe('serve start-up and shutdown', () => {
  it('refuses a non-loopback bind without a token, saying how to fix it', async () => {
    const { code, stderr } = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], home.env);
    expect(code).toBe(2);
    expect(stderr).toMatch(/non-loopback address needs a bearer token.*CODE_EXEC_TOKEN/);
  });

  it('SIGTERM lets the call in flight finish, then exits 0', async () => {
    const daemon = await startDaemon(home.env);
    const client = await daemon.connect();
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = client.callTool({ name: 'execute_code', arguments: { code: 'console.log("started"); await sleep(1500); return "finished"' } }, undefined, {
      onprogress: (p) => p.message === 'started' && started(),
    });
    await running;
    daemon.proc.kill('SIGTERM');
    expect((await pending).structuredContent).toMatchObject({ success: true, result: 'finished' });
    expect(await daemon.exited).toBe(0);
    const messages = daemon.logs.map((l) => l.msg);
    expect(messages).toEqual(expect.arrayContaining(['shutting down', 'draining', 'stopped']));
    // one log line per call, with agent, session, tool, outcome and duration, never the code
    const call = daemon.logs.find((l) => l.msg === 'tool call' && l['tool'] === 'execute_code');
    expect(call).toMatchObject({ agent: 'local', session: expect.any(String), outcome: 'ok', duration_ms: expect.any(Number) });
    expect(JSON.stringify(daemon.logs)).not.toContain('sleep(1500)');
  }, 60_000);
});
