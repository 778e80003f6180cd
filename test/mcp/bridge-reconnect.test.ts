// The stdio bridge outlives its daemon: it speaks only the stateless revision to it (each request
// a POST of its own, no session), so across a daemon restart on the same port, a kill -9 and the
// daemon's idle expiry, the next call through the same bridge works, and the daemon never holds a
// session for it. Start-up probes are answered as embedded stdio answers them, and a refused token
// is reported as such. Real daemon processes, the real bridge binary, the SDK client.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon, Scratch } from '../fixtures/mcp/cli.js';
import { BIN, REPO, scratch, startDaemon, startStdioClient } from '../fixtures/mcp/cli.js';
import { eventually } from '../skills/helpers.js';

const TOKEN = 'bridge-test-token-0123456789';

async function echo(client: Awaited<ReturnType<typeof startStdioClient>>['client'], value: number): Promise<unknown> {
  const result = await client.callTool({ name: 'execute_code', arguments: { code: `return ${value} * 2` } });
  return (result.structuredContent as { result?: unknown } | undefined)?.result;
}

describe('stdio --connect outlives its daemon', () => {
  let home: Scratch;
  const daemons: Daemon[] = [];
  beforeAll(() => {
    home = scratch({ CODE_EXEC_SANDBOX_PROCESSES: '1' });
  });
  afterAll(async () => {
    await Promise.allSettled(daemons.map((d) => d.stop('SIGKILL')));
    home.remove();
  });

  it('keeps working across a daemon restart on the same port', async () => {
    const first = await startDaemon(home.env);
    daemons.push(first);
    const bridge = await startStdioClient(home.env, ['--connect', first.url]);
    try {
      expect(await echo(bridge.client, 21)).toBe(42);
      const running = bridge.client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(40000); return 1', timeout_seconds: 60 } });
      const outcome = running.then(
        () => 'answered',
        (error: unknown) => String(error),
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await first.stop('SIGKILL');
      const second = await startDaemon(home.env, ['--port', String(first.port)]);
      daemons.push(second);
      expect(await echo(bridge.client, 4)).toBe(8);
      // the call that was running when the daemon died is answered, not left waiting forever
      expect(await outcome).toMatch(/while this request ran .*it may not have completed: send it again/);
      // nothing to replay: the daemons never held a session for the bridge
      expect([...first.logs, ...second.logs].some((l) => l.msg === 'session opened')).toBe(false);
    } finally {
      await bridge.close();
    }
  }, 90_000);

  it('answers the call in flight at once when the daemon is killed, and the next call works once a daemon is back', async () => {
    const first = await startDaemon(home.env);
    daemons.push(first);
    const bridge = await startStdioClient(home.env, ['--connect', first.url]);
    try {
      expect(await echo(bridge.client, 1)).toBe(2);
      const running = bridge.client.callTool({ name: 'execute_code', arguments: { code: 'await sleep(50000); return 1', timeout_seconds: 60 } });
      let answeredAt = 0;
      const outcome = running.then(
        () => 'answered',
        (error: unknown) => {
          answeredAt = performance.now();
          return String(error);
        },
      );
      // let the call reach its sandbox before the daemon dies under it
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const killedAt = performance.now();
      await first.stop('SIGKILL');
      // answered long before the client's own 60 s request timeout (generous bound: 10 s)
      expect(await outcome).toMatch(/daemon at .* stopped while this request ran .*send it again once the daemon is back/);
      expect(answeredAt - killedAt).toBeLessThan(10_000);
      // the next call, sent while no daemon listens, waits for one and is answered by it
      const next = echo(bridge.client, 4);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const second = await startDaemon(home.env, ['--port', String(first.port)]);
      daemons.push(second);
      expect(await next).toBe(8);
      expect(await echo(bridge.client, 5)).toBe(10);
    } finally {
      await bridge.close();
    }
  }, 90_000);

  it('keeps working past the daemon\'s session idle time, holding no session there', async () => {
    const daemon = await startDaemon({ ...home.env, CODE_EXEC_SESSION_IDLE_SECONDS: '1' });
    daemons.push(daemon);
    const bridge = await startStdioClient(home.env, ['--connect', daemon.url]);
    try {
      expect(await echo(bridge.client, 1)).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await echo(bridge.client, 5)).toBe(10);
      expect(daemon.logs.some((l) => l.msg === 'session opened')).toBe(false);
      const tools = await bridge.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('execute_code');
    } finally {
      await bridge.close();
      await daemon.stop();
    }
  }, 90_000);

  it('answers start-up probes as embedded stdio does, not "daemon unreachable"', async () => {
    const daemon = await startDaemon(home.env);
    daemons.push(daemon);
    const proc = spawn(process.execPath, [BIN, 'stdio', '--connect', daemon.url], { cwd: REPO, env: home.env, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const lines = createInterface({ input: proc.stdout });
      const answers: Record<string, unknown>[] = [];
      lines.on('line', (line) => answers.push(JSON.parse(line) as Record<string, unknown>));
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} })}\n`);
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
      // a revision 2026-07-28 request (its version in _meta) goes to the daemon as is, no session needed
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: meta } })}\n`);
      await eventually(() => answers.length >= 3, 20_000);
      // server/discover is the stateless revision's: without its _meta the daemon names the missing keys
      expect(answers.find((a) => a['id'] === 1)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/missing _meta keys/) } });
      expect(answers.find((a) => a['id'] === 2)).toMatchObject({ result: {} });
      expect(answers.find((a) => a['id'] === 3)).toMatchObject({ result: { resultType: 'complete', cacheScope: 'private' } });
    } finally {
      proc.kill();
      await daemon.stop();
    }
  }, 60_000);

  it('says the token was refused when the daemon answers 401', async () => {
    const daemon = await startDaemon({ ...home.env, CODE_EXEC_TOKEN: TOKEN });
    daemons.push(daemon);
    try {
      const attempt = startStdioClient({ ...home.env, CODE_EXEC_TOKEN: 'wrong-token-0123456789' }, ['--connect', daemon.url]);
      await expect(attempt).rejects.toThrow(/token refused by the daemon .*check CODE_EXEC_TOKEN/);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
