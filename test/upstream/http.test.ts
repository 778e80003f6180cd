// Upstream servers reached by URL: the real server-everything in its Streamable HTTP mode, the
// legacy HTTP+SSE fallback, configured headers, and an HTTP server that dies and comes back.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamError, UpstreamManager } from '../../src/upstream/index.js';
import type { UpstreamManagerOptions } from '../../src/upstream/index.js';
import { startSseFixture, startStreamableFixture } from '../fixtures/upstream/http-servers.js';
import { binEntry, captureLogger, nextRecord, waitFor } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function create(options: Omit<UpstreamManagerOptions, 'logger'>, capture = captureLogger()): UpstreamManager {
  const manager = new UpstreamManager({ ...options, logger: capture.logger });
  cleanups.push(() => manager.close());
  return manager;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts server-everything in streamableHttp mode and resolves once it says it listens. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [binEntry('@modelcontextprotocol/server-everything'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${String(code)}: ${output}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('Streamable HTTP', () => {
  it('lists and calls the tools of the real server-everything over HTTP', async () => {
    const { url } = await startEverythingHttp();
    const manager = create({ servers: { everything: { url } } });
    await manager.start();
    expect(manager.status()['everything']).toMatchObject({ state: 'ready', transport: 'streamable-http' });
    expect(manager.status()['everything']?.pid).toBeUndefined();
    expect(manager.tools('everything').map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content']));
    await expect(manager.callTool('everything', 'echo', { message: 'over http' })).resolves.toBe('Echo: over http');
    await expect(manager.callTool('everything', 'get-structured-content', { location: 'New York' })).resolves.toMatchObject({ temperature: 33 });
  });

  it('sends configured headers', async () => {
    const fixture = await startStreamableFixture();
    cleanups.push(() => fixture.stop());
    const manager = create({ servers: { web: { url: fixture.url, headers: { 'X-Api-Key': 'secret-123' } } } });
    await manager.start();
    await expect(manager.callTool('web', 'header', { name: 'x-api-key' })).resolves.toBe('secret-123');
  });

  it('notices a server that went away, reconnects when it is back, and fails calls fast meanwhile', async () => {
    const fixture = await startStreamableFixture();
    cleanups.push(() => fixture.stop());
    const capture = captureLogger();
    const manager = create({ servers: { web: { url: fixture.url } } }, capture);
    await manager.start();
    await expect(manager.callTool('web', 'echo', { message: 'one' })).resolves.toBe('echo: one');

    const lost = nextRecord(capture, (r) => r.code === 'UPSTREAM_DISCONNECTED');
    await fixture.stop();
    await lost;
    expect(manager.status()['web']?.state).not.toBe('ready');
    const error = await manager.callTool('web', 'echo', { message: 'two' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('SERVER_UNAVAILABLE');
    expect(manager.tools('web').map((t) => t.name)).toEqual(['echo', 'header']);

    await fixture.restart();
    await waitFor(() => manager.status()['web']?.state === 'ready', 'the HTTP server to be reconnected');
    await expect(manager.callTool('web', 'echo', { message: 'three' })).resolves.toBe('echo: three');
    expect(manager.status()['web']?.restarts).toBeGreaterThanOrEqual(1);
  });

  it('reports an unreachable URL as failed without rejecting start', async () => {
    const port = await freePort();
    const manager = create({ servers: { nothing: { url: `http://127.0.0.1:${port}/mcp` } } });
    await manager.start();
    expect(manager.status()['nothing']).toMatchObject({ state: 'failed', transport: 'streamable-http' });
    expect(manager.status()['nothing']?.error).toBeTruthy();
  });
});

describe('legacy HTTP+SSE', () => {
  it('falls back to SSE when the server refuses Streamable HTTP', async () => {
    const fixture = await startSseFixture();
    cleanups.push(() => fixture.close());
    const manager = create({ servers: { legacy: { url: fixture.url } } });
    await manager.start();
    expect(manager.status()['legacy']).toMatchObject({ state: 'ready', transport: 'sse' });
    await expect(manager.callTool('legacy', 'echo', { message: 'via sse' })).resolves.toBe('echo: via sse');
  });
});
