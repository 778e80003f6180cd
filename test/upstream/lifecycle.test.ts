// Connection lifecycle: a server killed mid-session comes back, a server that cannot start is
// reported without stopping the others, tools/list_changed is followed, and tool lists are read
// page by page. Coordination is by log records and bounded polls, never by sleeping.
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamManager } from '../../src/upstream/index.js';
import type { UpstreamManagerOptions, UpstreamTool } from '../../src/upstream/index.js';
import { captureLogger, dynamicConfig, everythingConfig, isAlive, nextRecord, waitFor, rejection } from './helpers.js';

const managers: UpstreamManager[] = [];

function create(options: Omit<UpstreamManagerOptions, 'logger'>, capture = captureLogger()): { manager: UpstreamManager; capture: ReturnType<typeof captureLogger> } {
  const manager = new UpstreamManager({ ...options, logger: capture.logger });
  managers.push(manager);
  return { manager, capture };
}

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});


describe('a server killed mid-session', () => {
  it('goes reconnecting, keeps its tools, fails calls fast, then comes back ready with a new process', async () => {
    const { manager, capture } = create({ servers: { everything: everythingConfig() } });
    await manager.start();
    const before = manager.status()['everything'];
    expect(before?.state).toBe('ready');
    const pid = before?.pid;
    if (pid === undefined) throw new Error('no pid');

    // Observed synchronously when the loss is logged, so the downtime is seen whatever the backoff.
    let during: { state?: string; tools?: number; call?: Promise<unknown> } = {};
    capture.events.on('record', (record: { code?: string }) => {
      if (record.code !== 'UPSTREAM_DISCONNECTED') return;
      const status = manager.status()['everything'];
      during = { state: status?.state, tools: status?.tools, call: manager.callTool('everything', 'echo', { message: 'down' }) };
    });
    const lost = nextRecord(capture, (r) => r.code === 'UPSTREAM_DISCONNECTED');
    const back = nextRecord(capture, (r) => r.code === 'UPSTREAM_RECONNECTED');
    process.kill(pid, 'SIGKILL');
    await lost;

    expect(during.state).toBe('reconnecting');
    expect(during.tools).toBe(before?.tools);
    const downError = await rejection(during.call ?? Promise.resolve());
    expect(downError.code).toBe('SERVER_UNAVAILABLE');
    expect(downError.message).toContain('reconnecting');

    await back;
    const after = manager.status()['everything'];
    expect(after).toMatchObject({ state: 'ready', tools: before?.tools });
    expect(after?.restarts).toBeGreaterThanOrEqual(1);
    expect(after?.pid).not.toBe(pid);
    expect(isAlive(pid)).toBe(false);
    await expect(manager.callTool('everything', 'echo', { message: 'back' })).resolves.toBe('Echo: back');
  });

  it('fails a call in flight with CONNECTION_LOST', async () => {
    const { manager } = create({ servers: { everything: everythingConfig() } });
    await manager.start();
    const pid = manager.status()['everything']?.pid ?? -1;
    const call = manager.callTool('everything', 'trigger-long-running-operation', { duration: 30, steps: 30 });
    process.kill(pid, 'SIGKILL');
    const error = await rejection(call);
    expect(error.code).toBe('CONNECTION_LOST');
    expect(error.message).toContain('everything');
    await waitFor(() => manager.status()['everything']?.state === 'ready', 'everything to come back');
  });
});

describe('a server that cannot start', () => {
  it('is reported failed, logged once, retried, and does not stop the others', async () => {
    const { manager, capture } = create({
      servers: {
        missing: { command: 'definitely-not-a-command-4f1c9', args: [] },
        everything: everythingConfig(),
      },
      backoff: { initialMs: 20, maxMs: 40 },
    });
    await manager.start();
    const status = manager.status();
    expect(status['everything']?.state).toBe('ready');
    expect(status['missing']?.state).toBe('failed');
    expect(status['missing']?.error).toContain('command not found');
    expect(manager.tools('missing')).toEqual([]);

    await waitFor(() => (manager.status()['missing']?.restarts ?? 0) >= 2, 'two retries');
    expect(manager.status()['missing']?.state).toBe('failed');
    expect(capture.records.filter((r) => r.code === 'UPSTREAM_START_FAILED' && r['server'] === 'missing')).toHaveLength(1);

    const error = await rejection(manager.callTool('missing', 'anything', {}));
    expect(error.code).toBe('SERVER_UNAVAILABLE');
    expect(error.message).toContain('failed to start');
  });

  it('quotes the stderr of a server that exits during start-up', async () => {
    const { manager } = create({
      servers: { crashy: { command: process.execPath, args: ['-e', 'console.error("boom: API_KEY is not set"); process.exit(3)'] } },
    });
    await manager.start();
    expect(manager.status()['crashy']).toMatchObject({ state: 'failed', error: expect.stringContaining('boom: API_KEY is not set') as unknown });
  });

  it('marks an invalid configuration failed without retrying it', async () => {
    const { manager } = create({
      servers: {
        nourl: { url: 'not a url' },
        badtimeout: { command: process.execPath, timeout_ms: -5 },
      },
      backoff: { initialMs: 1, maxMs: 1 },
    });
    await manager.start();
    const status = manager.status();
    expect(status['nourl']).toMatchObject({ state: 'failed', restarts: 0, error: expect.stringContaining('"url" is not a valid URL') as unknown });
    expect(status['badtimeout']).toMatchObject({ state: 'failed', error: expect.stringContaining('timeout_ms') as unknown });
  });

  it('refuses bad manager options by name', () => {
    expect(() => new UpstreamManager({ servers: {}, logger: captureLogger().logger, callTimeoutMs: 0 })).toThrow(/callTimeoutMs must be a positive number/);
  });
});

describe('tool lists', () => {
  it('follows pagination cursors', async () => {
    const { manager } = create({ servers: { dynamic: dynamicConfig() } });
    await manager.start();
    expect(manager.tools('dynamic').map((t) => t.name)).toEqual([
      'add_tool',
      'remove_tool',
      'json_text',
      'throw_rpc_error',
      'bad_result',
      'strict_2020',
      'broken_schema',
    ]);
  });

  it('follows tools/list_changed: added and removed tools are re-listed and announced', async () => {
    const changes: { server: string; tools: UpstreamTool[] | null }[] = [];
    const { manager } = create({ servers: { dynamic: dynamicConfig() }, onToolsChanged: (server, tools) => changes.push({ server, tools }) });
    await manager.start();
    expect(changes).toHaveLength(1);

    await expect(manager.callTool('dynamic', 'add_tool', { name: 'greet', reply: 'hello there' })).resolves.toBe('added greet');
    const added = await waitFor(() => changes.find((c) => c.tools?.some((t) => t.name === 'greet')), 'greet to be listed');
    expect(added.server).toBe('dynamic');
    expect(manager.tools('dynamic').map((t) => t.name)).toContain('greet');
    await expect(manager.callTool('dynamic', 'greet', {})).resolves.toBe('hello there');

    await manager.callTool('dynamic', 'remove_tool', { name: 'greet' });
    await waitFor(() => !manager.tools('dynamic').some((t) => t.name === 'greet'), 'greet to be gone');
    expect((await rejection(manager.callTool('dynamic', 'greet', {}))).code).toBe('UNKNOWN_TOOL');
  });
});

describe('fixture failure modes', () => {
  it('maps a JSON-RPC error to TOOL_ERROR and a malformed result to PROTOCOL_ERROR', async () => {
    const { manager } = create({ servers: { dynamic: dynamicConfig() } });
    await manager.start();
    const rpc = await rejection(manager.callTool('dynamic', 'throw_rpc_error', {}));
    expect(rpc.code).toBe('TOOL_ERROR');
    expect(rpc.message).toContain('dynamic.throw_rpc_error failed');
    expect(rpc.message).toContain('the fixture refuses this on purpose');

    const bad = await rejection(manager.callTool('dynamic', 'bad_result', {}));
    expect(bad.code).toBe('PROTOCOL_ERROR');
    await expect(manager.callTool('dynamic', 'json_text', {})).resolves.toEqual({ items: [1, 2, 3], ok: true });
  });

  it('validates with the 2020-12 dialect and passes through a schema that does not compile', async () => {
    const { manager, capture } = create({ servers: { dynamic: dynamicConfig() } });
    await manager.start();
    await expect(manager.callTool('dynamic', 'strict_2020', { pair: ['a', 1] })).resolves.toEqual(['a', 1]);
    const wrong = await rejection(manager.callTool('dynamic', 'strict_2020', { pair: ['a', 'b'], extra: true }));
    expect(wrong.code).toBe('INVALID_ARGUMENT');
    expect(wrong.message).toContain('"pair[1]" must be number (got string)');
    expect(wrong.message).toContain('unknown argument "extra"');

    await expect(manager.callTool('dynamic', 'broken_schema', { x: 1 })).resolves.toBe('server saw {"x":1}');
    await manager.callTool('dynamic', 'broken_schema', { x: 2 });
    expect(capture.records.filter((r) => r.code === 'UPSTREAM_SCHEMA_INVALID')).toHaveLength(1);
  });
});
