// Starts a cluster on loopback for trying and testing: a Redis, N daemons sharing skills and
// workspace folders under one temp directory, and nginx in front hashing Mcp-Session-Id. Used by
// `npm run cluster`, the cluster tests (test/cluster/) and the cluster benchmark.

import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nginxConfig } from './nginx-config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root, from bench/cluster (source) or dist/bench/cluster (built). */
const repoRoot = here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..', '..') : path.resolve(here, '..', '..');
const BIN = path.join(repoRoot, 'bin', 'code-execution-mcp.js');
/** How long every part has to answer at start, ms. */
const READY_TIMEOUT_MS = 60_000;

export interface LocalClusterOptions {
  daemons: number;
  /** Parent of the cluster folder; default the system temp folder. */
  parentDir?: string;
  /** A JSON config file every daemon reads (agents, limits...). */
  configFile?: string;
  /** Extra environment for every daemon. */
  env?: Record<string, string>;
}

export interface DaemonProcess {
  index: number;
  port: number;
  /** "127.0.0.1:PORT", as nginx's upstream list names it. */
  address: string;
  url: string;
  process: ChildProcess;
  get pid(): number;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

export interface LocalCluster {
  dir: string;
  /** The MCP endpoint through nginx. */
  url: string;
  nginxPort: number;
  redisPort: number;
  redisUrl: string;
  redisKey: string;
  daemons: DaemonProcess[];
  nginx: ChildProcess;
  redis(): ChildProcess;
  /** Stops Redis (SIGTERM) and waits for it to exit. */
  stopRedis(): Promise<void>;
  /** Starts Redis again on the same port. */
  startRedis(): Promise<void>;
  /** Stops everything: daemons drain (SIGTERM), then nginx and Redis. Idempotent. */
  stop(): Promise<void>;
}

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  if (!Number.isInteger(options.daemons) || options.daemons < 1 || options.daemons > 32) throw new RangeError('--daemons must be an integer between 1 and 32');
  for (const [bin, flag] of [['redis-server', '--version'], ['nginx', '-v']] as const) {
    if (spawnSync(bin, [flag]).error) throw new Error(`${bin} is not installed (or not on PATH); install it: apt-get install -y redis-server nginx`);
  }
  const dir = mkdtempSync(path.join(options.parentDir ?? tmpdir(), 'code-exec-cluster-'));
  for (const sub of ['skills', 'workspace', 'data', 'logs', 'redis', 'nginx/tmp']) mkdirSync(path.join(dir, sub), { recursive: true });
  const children: ChildProcess[] = [];
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const daemonsGone = daemons.map((d) => terminate(d.process, 'SIGTERM', 15_000));
      await Promise.all(daemonsGone);
      await terminate(nginx, 'SIGQUIT', 5_000);
      await terminate(redisProcess, 'SIGTERM', 5_000);
    })());

  const redisPort = await freePort();
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const redisKey = randomBytes(32).toString('hex');
  let redisProcess = startRedis(dir, redisPort);
  children.push(redisProcess);
  let nginx: ChildProcess | undefined;
  const daemons: DaemonProcess[] = [];
  try {
    await waitFor(() => redisAnswers(redisPort), 'redis-server');
    const ports: number[] = [];
    for (let i = 0; i < options.daemons; i++) ports.push(await freePort());
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      CODE_EXEC_REDIS: redisUrl,
      CODE_EXEC_REDIS_KEY: redisKey,
      CODE_EXEC_DATA_DIR: path.join(dir, 'data'),
      CODE_EXEC_SKILLS_DIR: path.join(dir, 'skills'),
      CODE_EXEC_WORKSPACE_DIR: path.join(dir, 'workspace'),
      CODE_EXEC_SANDBOX_PROCESSES: '1',
      CODE_EXEC_PYTHON_PROCESSES: '0',
      CODE_EXEC_LOG_FORMAT: 'json',
      ...options.env,
    };
    ports.forEach((port, index) => {
      const args = [BIN, 'serve', '--port', String(port), ...(options.configFile ? ['--config', options.configFile] : [])];
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.pipe(createWriteStream(path.join(dir, 'logs', `daemon-${index + 1}.log`)));
      children.push(child);
      daemons.push({
        index,
        port,
        address: `127.0.0.1:${port}`,
        url: `http://127.0.0.1:${port}/mcp`,
        process: child,
        get pid() {
          return child.pid ?? -1;
        },
        exited: exitOf(child),
      });
    });
    const nginxPort = await freePort();
    const conf = path.join(dir, 'nginx', 'nginx.conf');
    writeFileSync(conf, nginxConfig({ prefix: path.join(dir, 'nginx'), listenPort: nginxPort, servers: daemons.map((d) => d.address), asRoot: process.getuid?.() === 0 }));
    const nginxChild = spawn('nginx', ['-c', conf, '-p', path.join(dir, 'nginx')], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginxChild.stderr?.pipe(createWriteStream(path.join(dir, 'logs', 'nginx.log')));
    nginx = nginxChild;
    children.push(nginxChild);
    await Promise.all(daemons.map((d) => waitFor(() => healthy(`http://127.0.0.1:${d.port}/healthz`, d.process), `daemon ${d.index + 1} (log: ${path.join(dir, 'logs', `daemon-${d.index + 1}.log`)})`)));
    await waitFor(() => healthy(`http://127.0.0.1:${nginxPort}/healthz`, nginxChild), `nginx (log: ${path.join(dir, 'logs', 'nginx.log')})`);
    // Every daemon has announced itself once it answers; one more heartbeat lets each read the others.
    await new Promise((r) => setTimeout(r, 1_200));
    return {
      dir,
      url: `http://127.0.0.1:${nginxPort}/mcp`,
      nginxPort,
      redisPort,
      redisUrl,
      redisKey,
      daemons,
      nginx: nginxChild,
      redis: () => redisProcess,
      stopRedis: () => terminate(redisProcess, 'SIGTERM', 5_000),
      startRedis: async () => {
        redisProcess = startRedis(dir, redisPort);
        await waitFor(() => redisAnswers(redisPort), 'redis-server');
      },
      stop,
    };
  } catch (error) {
    await Promise.all(children.map((c) => terminate(c, 'SIGKILL', 2_000)));
    throw error;
  }
}

function startRedis(dir: string, port: number): ChildProcess {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'), '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.pipe(createWriteStream(path.join(dir, 'logs', 'redis.log'), { flags: 'a' }));
  return child;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** Signals a process and waits for it to exit; SIGKILL past `ms`. */
export async function terminate(child: ChildProcess | undefined, signal: NodeJS.Signals, ms: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = exitOf(child);
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await gone;
  clearTimeout(timer);
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
}

async function healthy(url: string, child: ChildProcess): Promise<boolean> {
  if (child.exitCode !== null) throw new Error(`process ${child.pid} exited with code ${child.exitCode} before answering ${url}`);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
