// The upstream manager against the real reference servers over stdio: server-everything,
// server-filesystem and server-memory, installed from npm as devDependencies.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamManager } from '../../src/upstream/index.js';
import type { UpstreamTool } from '../../src/upstream/index.js';
import { captureLogger, everythingConfig, filesystemConfig, isAlive, memoryConfig, rejection } from './helpers.js';

let dir: string;
let manager: UpstreamManager;
const changes: { server: string; tools: UpstreamTool[] | null }[] = [];


beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'upstream-real-')));
  writeFileSync(join(dir, 'data.json'), '{"k": 1}\n');
  manager = new UpstreamManager({
    servers: {
      everything: everythingConfig(),
      filesystem: filesystemConfig(dir),
      memory: memoryConfig(join(dir, 'memory.jsonl')),
    },
    logger: captureLogger().logger,
    onToolsChanged: (server, tools) => changes.push({ server, tools }),
  });
  await manager.start();
});

afterAll(async () => {
  await manager?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('listing', () => {
  it('lists the tools of all three servers and reports them ready', () => {
    const status = manager.status();
    for (const server of ['everything', 'filesystem', 'memory']) {
      expect(status[server]).toMatchObject({ state: 'ready', restarts: 0, transport: 'stdio' });
      expect(status[server]?.pid).toBeTypeOf('number');
    }
    const names = (server: string): string[] => manager.tools(server).map((t) => t.name);
    expect(names('everything')).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content', 'get-tiny-image', 'trigger-long-running-operation']));
    expect(names('filesystem')).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory', 'search_files']));
    expect(names('memory')).toEqual(expect.arrayContaining(['create_entities', 'read_graph', 'search_nodes', 'open_nodes']));
    expect(manager.tools()).toHaveLength(names('everything').length + names('filesystem').length + names('memory').length);
    expect(status['memory']?.tools).toBe(names('memory').length);
  });

  it('gives each tool its server, description, schemas and annotations', () => {
    const sum = manager.tools('everything').find((t) => t.name === 'get-sum');
    expect(sum).toMatchObject({ server: 'everything', description: expect.stringContaining('sum') as unknown });
    expect(sum?.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
    expect(sum?.annotations).toMatchObject({ readOnlyHint: true });
    const weather = manager.tools('everything').find((t) => t.name === 'get-structured-content');
    expect(weather?.outputSchema).toMatchObject({ type: 'object' });
    expect(Object.isFrozen(weather?.inputSchema)).toBe(true);
  });

  it('announces each server once its tools are listed', () => {
    for (const server of ['everything', 'filesystem', 'memory']) {
      const last = changes.filter((c) => c.server === server).at(-1);
      expect(last?.tools?.map((t) => t.name).sort()).toEqual(manager.tools(server).map((t) => t.name).sort());
    }
  });
});

describe('results', () => {
  it('returns structured content when the tool gives it', async () => {
    await expect(manager.callTool('everything', 'get-structured-content', { location: 'Chicago' })).resolves.toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
  });

  it('returns text when it is not JSON', async () => {
    await expect(manager.callTool('everything', 'echo', { message: 'hello' })).resolves.toBe('Echo: hello');
    await expect(manager.callTool('everything', 'get-sum', { a: 2, b: 40 })).resolves.toBe('The sum of 2 and 40 is 42.');
  });

  it('parses text that is JSON', async () => {
    const env = await manager.callTool('everything', 'get-env', undefined);
    expect(env).toBeTypeOf('object');
    expect(env).toHaveProperty('PATH');
  });

  it('describes images and embedded resources as plain objects', async () => {
    const image = (await manager.callTool('everything', 'get-tiny-image', {})) as Record<string, unknown>[];
    expect(image.map((b) => b['type'])).toEqual(['text', 'image', 'text']);
    expect(image[1]).toMatchObject({ type: 'image', mimeType: 'image/png', bytes: expect.any(Number) as unknown, data: expect.any(String) as unknown });
    expect(image[1]?.['bytes']).toBeGreaterThan(100);

    const reference = (await manager.callTool('everything', 'get-resource-reference', {})) as Record<string, unknown>[];
    expect(reference.find((b) => b['type'] === 'resource')).toMatchObject({ uri: expect.stringContaining('demo://') as unknown, text: expect.any(String) as unknown });
  });

  it('chains two calls on one server: memory writes then reads its graph', async () => {
    await manager.callTool('memory', 'create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] });
    await expect(manager.callTool('memory', 'open_nodes', { names: ['Ada'] })).resolves.toMatchObject({
      entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
    });
  });

  it('reads and writes files through server-filesystem', async () => {
    await manager.callTool('filesystem', 'write_file', { path: join(dir, 'note.txt'), content: 'upstream works' });
    await expect(manager.callTool('filesystem', 'read_text_file', { path: join(dir, 'note.txt') })).resolves.toEqual({ content: 'upstream works' });
  });
});

describe('errors', () => {
  it('turns isError results into TOOL_ERROR naming server and tool, with the tool text', async () => {
    const error = await rejection(manager.callTool('filesystem', 'read_text_file', { path: join(dir, 'missing.txt') }));
    expect(error.code).toBe('TOOL_ERROR');
    expect(error.message).toContain('filesystem.read_text_file');
    expect(error.message).toContain('ENOENT');
    expect(error).toMatchObject({ server: 'filesystem', tool: 'read_text_file' });
  });

  it('rejects arguments that do not match the schema, naming the argument', async () => {
    const missing = await rejection(manager.callTool('everything', 'get-sum', { a: 1 }));
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.message).toContain('everything.get-sum');
    expect(missing.message).toContain('missing required argument "b"');
    expect(missing.message).toContain('{ a: number, b: number }');

    const wrongType = await rejection(manager.callTool('everything', 'get-sum', { a: 'one', b: 2 }));
    expect(wrongType.message).toContain('"a" must be number (got string)');

    const wrongEnum = await rejection(manager.callTool('everything', 'get-structured-content', { location: 'Paris' }));
    expect(wrongEnum.message).toMatch(/"location" must be one of "New York", "Chicago", "Los Angeles" \(got "Paris"\)/);

    const nested = await rejection(manager.callTool('memory', 'create_entities', { entities: [{ name: 'x', entityType: 'y' }] }));
    expect(nested.message).toContain('"entities[0]" is missing required property "observations"');

    const notObject = await rejection(manager.callTool('everything', 'echo', 'hello'));
    expect(notObject.message).toContain('arguments must be an object, got a string');
  });

  it('suggests close names for an unknown tool or server', async () => {
    const tool = await rejection(manager.callTool('everything', 'get_sum', { a: 1, b: 2 }));
    expect(tool.code).toBe('UNKNOWN_TOOL');
    expect(tool.message).toContain('everything.get-sum');

    const elsewhere = await rejection(manager.callTool('everything', 'read_graph', {}));
    expect(elsewhere.message).toContain('memory.read_graph');

    const server = await rejection(manager.callTool('memroy', 'read_graph', {}));
    expect(server.code).toBe('UNKNOWN_TOOL');
    expect(server.message).toContain('"memory"');
  });

  it('times out a long call, asks the server to cancel it, and keeps the server usable', async () => {
    const error = await rejection(manager.callTool('everything', 'trigger-long-running-operation', { duration: 30, steps: 30 }, { timeoutMs: 200 }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toContain('everything.trigger-long-running-operation timed out after 200 ms');
    await expect(manager.callTool('everything', 'echo', { message: 'still here' })).resolves.toBe('Echo: still here');
  });

  it('aborts an in-flight call with the caller signal and detaches from it', async () => {
    const controller = new AbortController();
    const call = manager.callTool('everything', 'trigger-long-running-operation', { duration: 30, steps: 30 }, { signal: controller.signal });
    controller.abort(new Error('execute_code cancelled'));
    const error = await rejection(call);
    expect(error.code).toBe('ABORTED');
    expect(error.message).toContain('execute_code cancelled');

    const already = await rejection(manager.callTool('everything', 'echo', { message: 'x' }, { signal: AbortSignal.abort() }));
    expect(already.code).toBe('ABORTED');
    await expect(manager.callTool('everything', 'echo', { message: 'after abort' })).resolves.toBe('Echo: after abort');
  });

  it('counts calls and failures per server', () => {
    const status = manager.status();
    expect(status['everything']?.calls).toBeGreaterThan(5);
    expect(status['everything']?.failures).toBeGreaterThan(3);
    expect(status['filesystem']?.failures).toBe(1);
  });
});

describe('close', () => {
  it('ends every child process and is idempotent; later calls fail as unavailable', async () => {
    const pids = Object.values(manager.status()).map((s) => s.pid ?? -1);
    await Promise.all([manager.close(), manager.close()]);
    await manager.close();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(Object.values(manager.status()).map((s) => s.state)).toEqual(['closed', 'closed', 'closed']);
    const error = await rejection(manager.callTool('everything', 'echo', { message: 'x' }));
    expect(error.code).toBe('SERVER_UNAVAILABLE');
    expect(error.message).toContain('closed');
  });
});
